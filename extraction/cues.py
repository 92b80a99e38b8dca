"""Cue lexicons: what people say to coding agents when something is worth remembering.

Every pattern runs on a lowercased sentence with quoted passages masked (see segment.py).
Weights are summed per kind; 1.0 or more is enough to start a candidate on its own, less
only strengthens or extends one. The lexicons are general English about software work, not
phrasings of any one conversation.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from memvet.memory.kinds import Kind

Cue = tuple[re.Pattern[str], float]


def _cues(*pairs: tuple[str, float]) -> list[Cue]:
    return [(re.compile(p), w) for p, w in pairs]


def score(text: str, cues: Iterable[Cue]) -> float:
    """Sum of the weights of the cues found in `text`."""
    return sum(w for rx, w in cues if rx.search(text))


# --- what makes a sentence yield nothing -------------------------------------------------------

_Q_START = (
    r"what|whats|what's|why|how|where|when(?! you| we| i| it| the| a )|which|who|whose|"
    r"is|are|was|were|does(?!n't| not)|did(?!n't| not)|do(?!n't| not| it| that| this)|"
    r"can|could|would|will|should|shall|may|any idea|is there|are there|anything else"
)
QUESTION = re.compile(
    r"\?\s*\W*$|^(?:(?:ok|okay|so|and|also|hmm+|hm|btw|but|wait|oh|ah|right|quick question)"
    r"[,.:!]*\s+)*(?:" + _Q_START + r")\b"
)

HYPOTHETICAL = re.compile(
    r"\b(?:what if|maybe|perhaps|one day|someday|some day|at some point|eventually|"
    r"thinking out loud|just an idea|just a thought|in theory|hypothetically|if we ever|"
    r"would be nice|i wonder|wondering|not sure (?:if|whether)|could we|should we|we could|"
    r"we might|might be worth|worth (?:a look|a try|considering|trying)|not now|not today|"
    r"not this (?:quarter|sprint|week|month|year)|in an ideal world|if only|imagine|"
    r"would it|would you|we should really|one of these days|down the road|pipe dream)\b"
)

JOKE = re.compile(
    r"\b(?:lol|lmao|lmfao|rofl|haha\w*|hehe\w*|kidding|jk|just joking|joking)\b"
    r"|[\U0001f602\U0001f923]"
)
# "kidding" also takes back the sentence before it.
JOKE_RETRACT = re.compile(r"\b(?:kidding|jk|just joking|joking)\b")

RETRACTION = re.compile(
    r"\b(?:scratch that|never ?mind|forget (?:it|that|about it|what i said)|"
    r"ignore (?:that|what i said|my last|the last)|disregard (?:that|my last|the last)|"
    r"actually,? no|no,? wait|wait,? no|nah|on second thought|i take (?:that|it) back|"
    r"changed my mind|cancel that|undo that|strike that|not anymore)\b"
)

# An imperative for the task at hand; it is only a rule when said with a generality marker.
ONE_OFF_VERB = re.compile(
    r"^(?:(?:ok|okay|so|and|also|now|then|pls|please|can you|could you|just|hey|alright|"
    r"great|good|cool|nice|k|yes|yep|no|fine)[,.!]*\s+)*"
    r"(?:run|rerun|re-run|open|show|fix|add|bump|set|kick|commit|push|restart|delete|remove|"
    r"make|put|leave|skip|review|write|create|update|check|look|try|build|deploy|rename|move|"
    r"change|revert|merge|rebase|install|start|send|post|mention|sync|apply|do|give|explain|"
    r"find|grep|print|paste|generate|implement|refactor|clean|ship|go ahead|continue|proceed|"
    r"undo|split|convert|investigate|debug|profile|measure|benchmark|retry|pull|fetch|"
    r"download|upload|copy|paste|format|lint|type ?check|test|drop|close|reopen|tag|release|"
    r"publish|rollback|roll back|migrate|seed|reset|clear|increase|decrease|lower|raise|"
    r"enable|disable|turn|switch it|keep it|send it|ping|tell|ask|let me know|draft|sketch|"
    r"summari[sz]e|describe|list|compare|dig|figure|help|walk me)\b"
)
TEMPORARY = re.compile(
    r"\b(?:for now|this time|right now|for the demo|this afternoon|tonight|for this (?:one|pr|"
    r"branch|change|task|ticket)|just this once|in \d+ ?min\w*|for today|temporarily|"
    r"for the moment|until further notice is not|atm)\b|\bnow$"
)
GENERAL = re.compile(
    r"\b(?:always|never|every ?time|each time|whenever|from now on|going forward|"
    r"in (?:the )?future|by default|ever|any time|anytime|as a rule)\b"
)
# Feedback on the agent's last step: true now, but no context for a rule that follows it.
FEEDBACK = re.compile(
    r"^(?:thanks|thank you|thx|ty|great|perfect|nice|awesome|cool|lgtm|looks good|"
    r"good job|well done|that (?:works|worked|fixed|did|helped|was it)|it works now)\b"
)

AGENT_NARRATION = re.compile(
    r"^(?:\W*(?:ugh|argh|hey|oops|ok|so)\W+)*(?:you|u) (?:just |already |again )?"
    r"(?:ran|did|made|added|created|deleted|forgot|broke|used|wrote|put|changed|removed|"
    r"committed|pushed|missed|generated|installed)\b"
)

# --- the six kinds ----------------------------------------------------------------------------

PERSONA_SCOPE = re.compile(
    r"\b(?:for me|to me|me|my|mine|myself|i|i'm|i'd|i've|i'll)\b|"
    r"\b(?:every|any|all|each|other) (?:repos?|projects?|codebases?)\b|\bnot just (?:this|here)\b|"
    r"\banything you (?:write|do|send|generate|produce)\b"
)

PREFERENCE = _cues(
    (r"\b(?:from now on|going forward|in (?:the )?future)\b", 0.6),
    (r"\b(?:reply|respond|answer|talk|speak|write back|communicate) (?:to me )?in\b", 0.8),
    (r"\b(?:go easy on|spare me|no need (?:for|to)|don'?t bother)\b", 0.6),
    (r"\bexplanations?\b|\bexplain\w*\b", 0.3),
    (
        r"\bi'?m (?:a|an) (?:[\w-]+ )?(?:dev|developer|engineer|designer|beginner|newbie|expert)\b",
        0.6,
    ),
    (r"\b(?:stop|quit) \w+ing\b", 1.0),
    (
        r"\bi(?:'d| would)? (?:really |strongly |much )?(?:prefer|like|love|hate|would rather|"
        r"don'?t like|do not like|don'?t want|do not want|don'?t need|do not need|can'?t stand|"
        r"dislike)\b",
        1.0,
    ),
    (r"\bi (?:want|need) you to\b", 0.8),
    (r"\bi use [\w.+-]+ for (?:everything|all|any)\b", 1.2),
    (
        r"\bi (?:always|usually|generally|only|never) (?:use|work|run|write|read|prefer|review|"
        r"test|deploy|commit|merge|check)\b",
        0.8,
    ),
    (r"\b(?:anything|everything|whatever|all code|any code) you (?:write|do|send|generate)\b", 1.0),
    (r"\b(?:every|any|all|each|other) (?:repos?|projects?|codebases?)\b|\bnot just this\b", 0.8),
    (
        r"\bwhen(?:ever)? you (?:explain|report|answer|reply|respond|write|summari[sz]e|tell|show|"
        r"present|give|describe|talk|ask|suggest|review|propose|communicate)\b",
        1.0,
    ),
    (
        r"\byour (?:answers?|responses?|replies|messages?|summar(?:y|ies)|explanations?|output|"
        r"tone|writing|comments|commit messages?|reports?)\b",
        1.0,
    ),
    (
        r"\b(?:keep|be) (?:it |things |answers |responses |replies )?(?:short|brief|concise|terse|"
        r"succinct|to the point)\b",
        1.0,
    ),
    (
        r"\b(?:no|don'?t|never|stop|skip|without|avoid) (?:\w+ )?(?:emojis?|recaps?|"
        r"summar(?:y|ies)|preambles?|fluff|apolog\w*|filler|small talk|pleasantries|disclaimers)\b",
        1.0,
    ),
    (
        r"\bask(?:ing)? (?:me )?(?:for )?(?:confirmation|permission|approval)\b|"
        r"\bask me (?:first|before)\b|\bcheck with me\b|\bonly ask\b|\bdon'?t ask\b",
        1.0,
    ),
    (
        r"\bassume i\b|\bi'?m (?:new to|not familiar|familiar with|an expert|a beginner)\b|"
        r"\bi know [\w.]+ (?:really )?well\b",
        1.0,
    ),
    (r"\b(?:is|are) mine\b|\bi (?:review|commit|merge|apply|push)\b.*\b(?:myself|manually)\b", 0.8),
    (r"\bi (?:skim|read the diff|review (?:it|everything|the diff))\b", 0.5),
    (r"\b(?:don'?t|do not|never|stop)\b.*\b(?:for me|on my behalf)\b", 1.0),
    (r"\bon my behalf\b", 0.6),
    (r"\btell me (?:after|first|before|when|afterwards)\b", 0.6),
    (
        r"\bbefore (?:telling|asking|showing|pinging|bothering) me\b|"
        r"\btell(?:ing)? me (?:you'?re|it'?s|things are) (?:done|ready|finished)\b",
        0.6,
    ),
    (
        r"\b(?:put|format|show|present|report|give|write)\b[\w ]{0,20}\b(?:in|as) (?:a )?(?:table|"
        r"tables|bullets?|bullet points|a list|prose|markdown|plain text)\b",
        0.8,
    ),
    (r"\b(?:please|pls|plz)\b", 0.2),
)

PREFERENCE_WORKSPACE = _cues(
    (r"\bnew code\b[\w ]{0,30}\b(?:uses?|should use|must use|is written in)\b", 1.2),
    (r"\b(?:we|the team) prefer\b|\bprefer [\w.+-]+ (?:over|to)\b", 1.0),
    (r"\b(?:no|avoid) [\w-]+(?: [\w-]+)? (?:in|inside) [\w./-]+,? (?:please|pls)\b", 1.0),
    (r"\b(?:please|pls)\b.*\b(?:no|don'?t|dont|avoid|never)\b", 0.2),
    (r"\bnot even\b", 0.2),
    (
        r"^(?:(?:please|pls|and|also)\s+)*(?:don'?t|do not|never|stop|avoid|no more) (?:add|use|"
        r"write|put|leave|include|create|generate|hardcode|inline|mock|catch|swallow|suppress|"
        r"disable|import)(?:ing)? (?:[\w-]+ )?[\w-]+s\b(?!.*\b(?:this|these|those|his|her|yet|now|"
        r"today|that (?:file|one|function|test|branch|pr))\b)",
        1.0,
    ),
)

PATTERN = _cues(
    (r"\b(?:every|each) ?time (?:you|we|someone|anyone|a|an)\b", 1.0),
    (r"\bwhenever (?:you|we|someone|anyone|a|an|the)\b", 1.0),
    (
        r"\b(?:every|each|any|all)\b(?: [\w/.<>()'-]+){1,5}? (?:gets?|needs?|must|should|"
        r"requires?|has to|have to|starts? with|goes? through|is required|go through|"
        r"gets? pulled|are pulled)\b",
        1.0,
    ),
    (
        r"\bbefore (?:you|we|anyone|someone) (?:push|commit|merge|open|tell|hand|release|deploy|"
        r"ship|mark|call|say|submit|cut|tag|publish|start|finish)\w*\b",
        1.0,
    ),
    (
        r"\bthat'?s (?:how|what) we (?:do|always|usually|normally)\b|\bhow we do (?:it|things)\b|"
        r"\bwe (?:always|never|usually|normally)\b",
        1.0,
    ),
    (r"\bnon-negotiable\b|\bno exceptions\b|\bconvention\b|\bthe layout for\b", 1.0),
    (r"\bsame for (?:anything|everything|all|any) new\b", 0.8),
    (
        r"\balways (?:run|add|write|use|check|test|update|bump|rebase|squash|tag|lint|format|"
        r"document|include|pin|regenerate|start)\b",
        0.7,
    ),
    (r"\ball [\w ]{1,30} (?:live|lives|go|belong) in\b", 1.4),
    (
        r"\bbefore (?:committing|pushing|merging|deploying|releasing|opening|tagging|shipping)\b",
        0.5,
    ),
    (
        r"^(?:(?:please|pls|and|also|always)\s+)*(?:use|name|prefix|suffix|put|keep|write|format|"
        r"sort|store|tag|label)\b.*\b(?:for|in|on|to) (?:all|every|each|any) [\w-]+",
        1.0,
    ),
)

DECISION = _cues(
    (
        r"\blet'?s (?:go with|go for|use|switch to|move to|adopt|stick with|keep using|keep|"
        r"standardi[sz]e on|pick|choose|go)\b",
        1.0,
    ),
    (r"\b(?:going|gonna go|go|went) with\b", 1.0),
    (r"\b(?:we(?:'ve| have)? )?(?:decided|agreed on|settled on|chose|picked|opted for)\b", 1.0),
    (r"\bdecision\b|\bfinal answer\b|\bfinal call\b", 0.8),
    (r"\b(?:we're|we are|we'll|we will) (?:moving|migrating|switching|standardi[sz]ing)\b", 1.0),
    (
        r"\b(?:we're going to|we are going to|we're gonna|we'll|we will) (?:use|adopt|switch to|"
        r"move to|migrate to|go with|standardi[sz]e on|keep|stay on)\b",
        1.0,
    ),
    (
        r"\b(?:we're|we are|we'll|we will|we) not (?:adding|using|doing|going to (?:use|add)|"
        r"introducing|supporting|adopting)\b|\bwe won'?t (?:use|add|adopt)\b",
        1.0,
    ),
    (r"\bstick (?:with|to)\b|\bfreeze (?:at|on)\b|\bwe freeze\b|\bfrozen at\b", 1.0),
    # a past move made for a reason is a decision worth keeping, not only an event
    (
        r"\b(?:we|the team) (?:moved|migrated|switched|replaced|swapped|dropped|ditched)\b"
        r"[^.;]*\b(?:because|since|so that|due to)\b",
        1.0,
    ),
    (r"\b(?:instead of|rather than|in favou?r of)\b", 0.4),
    (r"\b(?:drop|ditch|replace|remove) [\w.-]+(?: [\w.-]+)? (?:and|for|with|in favou?r)\b", 0.5),
    (r"\bphas(?:e|ed|ing) out\b|\bbeing (?:phased out|retired|replaced)\b", 0.6),
    (r"\b[\w-]+ (?:goes|go) (?:in|into|to|through) [\w./-]+(?: \w+)?,? not\b", 1.0),
    (r"\b(?:because|since|so that|too (?:painful|slow|expensive|complex))\b", 0.1),
)

FACT = _cues(
    (
        r"\b(?:fyi|heads up|for the record|just so you know|for context|for reference|"
        r"good to know|keep in mind|known (?:thing|issue|quirk)|always been like that|by design)\b",
        0.8,
    ),
    (r"^(?:note|careful|important|reminder|btw|context)\b", 0.6),
    (r"^(?:note|important|reminder|context|careful)\s*:", 0.3),
    (
        r"(?:^|[,;:] |\bso )(?:and |but )?never (?:ever )?(?!seen|been|heard|had|done|thought|"
        r"knew|known|tried|used|got|gotten|worked|noticed)[a-z]+\b(?<!ed)|\b(?:don'?t"
        r"|do not) ever\b",
        1.0,
    ),
    (r"(?<![\w-])(?:here|in this (?:repo|project|codebase))(?![\w-])", 0.2),
    (
        r"\b[\w.-]+ (?:uses|runs) (?:the )?[\w.-]+(?: [\w.-]+)? (?:strategy|driver|backend|engine|"
        r"runtime|version|image|adapter|protocol|mode)\b",
        0.5,
    ),
    (r"\bonly (?:has|have|runs|supports|allows)\b", 0.4),
    (
        r"\b(?:talks? to|connects? to|calls?|goes through|routes? through|reads? from|writes? to|"
        r"pulls? from|pushes? to) [\w ./-]{1,40}\b(?:through|via|over|using)\b",
        1.0,
    ),
    (
        r"(?<!went )(?<!go )(?<!goes )(?<!going )\b(?:lives?|living) (?:in|at|under)\b|"
        r"\b(?:is|are) (?:kept|stored|hosted|managed|defined|configured|located|vendored|"
        r"generated) (?:in|at|on|under|via|by|from)\b",
        1.3,
    ),
    (r"\b(?:we're|we are|we've been|everything is|it's all) (?:on|using) \S", 0.8),
    (
        r"\b(?:we|our [\w-]+(?: [\w-]+)?|the (?:repo|project|app|team|codebase|service|api|site|"
        r"backend|frontend|cluster|clusters|ci|pipeline|build|builds|test suite|tests|database|db|"
        r"cache|queue|workers?|servers?|monorepo|infra|docs|(?:staging|prod|production|dev|test)"
        r"(?: environment| env| server| cluster| database| db)?|deploy(?:ment)?(?: job| pipeline)?"
        r")) (?:only )?(?:uses?|runs? on|targets?|supports?|ships?|deploys?|builds? with|"
        r"depends on|relies on|is at|are at|is on|are on|is hosted|are hosted|triggers? on|"
        r"requires?|needs)\b",
        0.8,
    ),
    (r"\bdeploys? (?:(?:happen|go|run)s? )?(?:from|to|via|through)\b", 0.8),
    (r"\b(?:is|are) pinned (?:to|at)\b|\bpinned (?:to|at) (?:v|version )?\d", 1.0),
    (r"^(?:please )?(?:remember|keep in mind|don'?t forget|never forget)(?: that\b|:)", 1.0),
    (r"\b(?:is|are|runs|listens|served|lives) on (?:port )?\d{2,5}\b", 1.0),
    (r"\bport \d{2,5}\b", 0.3),
    (r"\b(?:msrv|minimum supported|min(?:imum)? version|only support|we support)\b", 1.0),
    (
        r"\b(?:is|are|'s) (?:deprecated|dead(?: code| config)?|legacy|append-only|read-only|"
        r"immutable|auto-generated|the source of truth|off-limits)\b|\bdead (?:code|config)\b",
        1.0,
    ),
    (r"\b(?:has|have|there'?s|there is) no [\w-]+", 0.5),
    (
        r"\b(?:usually|typically|normally|generally) (?:\w+ )?(?:around|at|arrives?"
        r"|lands?|takes?)\b",
        0.8,
    ),
    (
        r"\b(?:usually|typically|normally) (?:\w+ )?(?:around|at|by|before|after|takes?|lands?|"
        r"arrives?|about) ~?\d",
        0.3,
    ),
    (r"\b(?:is|are|'s|uses?|runs?|on|in|from|to|at) [^,.;]{1,40},? not (?:the )?[\w./@:-]+", 0.7),
    (r"\bnot [\w./-]+ but\b", 0.4),
    (r"\b(?:needs?|requires?) (?:the|a|an) [\w-]+(?: \w+)? (?:up|running|started|first)\b", 0.7),
    (r"\b(?:must|has to|have to|must not|mustn'?t|can'?t|cannot)\b", 0.3),
    (r"\bnever ever\b|\beverywhere in the\b|\bacross the (?:codebase|repo)\b", 0.5),
    (
        r"(?:^|[,;:] |\b(?:fyi|btw|and|but|note:?|also|while) )(?:staging|prod|production|dev|ci) "
        r"(?:is|runs|lives|has)\b",
        0.4,
    ),
    (r"\b(?:is|are) (?:owned|maintained|run|managed) by\b", 1.0),
    (r"^(?:(?:and|also|oh|btw)\s+)*remember (?:that|:)", 0.8),
    (
        r"\bevery (?:day|night|morning|hour|week|month|(?:mon|tues|wednes|thurs|fri"
        r"|satur|sun)day)\b",
        0.5,
    ),
)

PERSONA_FACT = re.compile(
    r"\bmy (?:machine|laptop|computer|setup|os|box|workstation|editor|shell|terminal|keyboard|"
    r"time ?zone|dev env\w*) (?:is|runs|has|uses)\b|\bi'?m (?:on|using) (?:a )?(?:mac"
    r"|windows|linux|wsl|ubuntu)\b|"
    r"\bi(?:'m| am) (?:based )?in (?:the )?[a-z]+ time ?zone\b"
)

# --- postmortems and events are recognised over a whole message --------------------------------

FAILURE = re.compile(
    r"\b(?:took (?:\w+ )?down|went down|(?:was|were) down|down for\b|outage|incident|"
    r"post-?mortem|broke\b|(?:was|were|got) broken|double[- ]count\w*|bit us|bitten us|"
    r"(?:was|were) inflated|nobody noticed|no one noticed|went unnoticed|rush(?:ed)? out|"
    r"hotfix|rolled back|root cause|the hard way|blew up|fell over|corrupted|data loss|"
    r"lost (?:\w+ )?data|(?:cost|bill|latency|error) spike|spiked|miscompil\w*|wiped|"
    r"(?:charged|billed|sent) twice|"
    r"ran out of (?:disk|memory|space|connections|file descriptors|inodes)|out of memory|"
    r"accidentally|by accident|by mistake|mistakenly|"
    r"\boom(?:-?killed)?|crash(?:ed|looped|looping)|deadlock(?:ed)?|leaked|filled up|"
    r"(?:errors?|bugs?|outage|crash(?:es)?|failures?) "
    r"(?:from|during|in) (?:last|the last|yesterday))\b"
)
CAUSE = re.compile(r"\b(?:because|due to|caused by|root cause|turned out|the reason)\b")
LESSON = re.compile(
    r"\b(?:we now|now we|we've (?:added|set|switched|changed|put)|from then on|always"
    r"|never|must|has to|have to|needs? to|make sure|rule|from now on|going forward|"
    r"keep (?:that|this) in mind|lesson|every new|for every|any new|note for the future|"
    r"so (?:that )?(?:it )?doesn'?t happen|so we don'?t|to avoid|write this down|don'?t .* again|"
    r"next time|in future)\b"
)

EVENT_VERB = re.compile(
    r"\b(?:went live|released|shipped|launched|deployed|rolled out|migrated|"
    r"moved (?:\w+ )?(?:from|to|off)|cut over|rotated|yanked|promoted|upgraded|downgraded|"
    r"finished|completed|merged|hit|reached|signed|onboarded|retired|decommissioned|sunset|"
    r"switched (?:over )?to|went out|published|announced|renamed|acquired|archived|"
    r"open-sourced|done as of)\b|\bdone,|\b(?:is|are) (?:now )?(?:at|on) \d+ ?%"
)
_MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?"
DATE = re.compile(
    r"\b(?:today|yesterday|last (?:night|week|sprint|month|weekend|(?:mon|tues|wednes|thurs|"
    r"fri|satur|sun)day)|this (?:morning|week)|on (?:mon|tues|wednes|thurs|fri|satur|sun)day|"
    + _MONTH
    + r" \d{1,2}(?:st|nd|rd|th)?\b|\d{1,2}(?:st|nd|rd|th)? "
    + _MONTH
    + r"|\d{4}-\d\d-\d\d|as of (?:now|today))"
)
FUTURE = re.compile(
    r"\b(?:will|i'?ll|we'?ll|gonna|going to|tomorrow|tonight|next (?:week|sprint|month)|"
    r"plan(?:ning)? to|about to|soon)\b"
)

# Earlier assistant turns that offered options, and a reply that picks one: "b." / "option a".
OPTIONS_OFFERED = re.compile(r"\(([a-e])\)|\b([a-e])\)|\boption ([a-e1-5])\b", re.I)
OPTION_PICK = re.compile(
    r"^(?:(?:no|ok|okay|yes|yeah|hmm|so)[,.!]*\s+)*(?:option )?\(?([a-e])\)?[.,:!)]?$"
)

ACK = re.compile(
    r"^\W*(?:understood|noted|got it|will do|ok|okay|sure|makes sense|good (?:catch|call|to know)|"
    r"thanks|sounds good|right|agreed|done|of course|absolutely|good point)\b",
    re.I,
)
CONFIRM = re.compile(
    r"^\W*(?:yes|yep|yeah|yup|correct|exactly|right|that'?s right|agreed|confirmed|"
    r"sounds good|do that|please do|go ahead)\W*$"
)
MEMORY_REQUEST = re.compile(
    r"\b(?:remember|write (?:this|that) down|note (?:this|that)|for the record|from now on|"
    r"keep (?:that|this) in mind|rule|note for the future|for future reference)\b"
)

KIND_PRIORITY: tuple[Kind, ...] = (
    Kind.POSTMORTEM,
    Kind.DECISION,
    Kind.PATTERN,
    Kind.PREFERENCE,
    Kind.EVENT,
    Kind.FACT,
)

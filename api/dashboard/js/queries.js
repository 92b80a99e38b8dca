// Every GraphQL document the dashboard sends. tests/dashboard validates each exported
// string against graph/schema.graphql, so keep them all here, as plain template strings.

const CANDIDATE_FIELDS = `
fragment CandidateFields on Candidate {
  id content kind namespace source confidence observations independentObservations status createdAt lastObservedAt
}`;

const MEMORY_FIELDS = `
fragment MemoryFields on Memory {
  id candidateId content kind namespace observations approvedAt approvedBy updatedAt
}`;

export const WHOAMI = `
query Whoami {
  viewer { name role namespaces }
  activePersona
  queueStats { pending memories }
}`;

export const PENDING = `
query Pending($status: CandidateStatus = PENDING, $namespace: String, $kind: MemoryKind, $source: CandidateSource, $order: CandidateOrder! = NEWEST, $first: Int! = 50, $after: String) {
  candidates(status: $status, namespace: $namespace, kind: $kind, source: $source, order: $order, first: $first, after: $after) {
    totalCount
    pageInfo { hasNextPage endCursor }
    edges { node { ...CandidateFields reviewedAt reviewedBy reviewReason } }
  }
  queueStats { pending memories pendingByNamespace { namespace count } }
  namespaces
}
${CANDIDATE_FIELDS}`;

export const CANDIDATE = `
query Candidate($id: ID!) {
  candidate(id: $id) { ...CandidateFields }
}
${CANDIDATE_FIELDS}`;

export const CANDIDATE_DETAIL = `
query CandidateDetail($id: ID!) {
  candidate(id: $id) {
    ...CandidateFields
    origins { id source conversationId turnId turnRef excerpt confidence createdAt }
  }
  related(candidateId: $id, limit: 5) {
    score
    memory { ...MemoryFields }
  }
  transitions(candidateId: $id) { id action fromStatus toStatus actor at reason changes }
}
${CANDIDATE_FIELDS}
${MEMORY_FIELDS}`;

export const TURN = `
query Turn($id: ID!) {
  turn(id: $id) {
    id conversationId turnId trigger workspace persona createdAt
    messages { role content }
  }
}`;

export const STATS = `
query Stats {
  queueStats { pending memories pendingByNamespace { namespace count } }
}`;

export const MEMORY_GROUPS = `
query MemoryGroups {
  memoryGroups { namespace count memories { ...MemoryFields } }
  queueStats { pending memories }
}
${MEMORY_FIELDS}`;

export const RECALL = `
query Recall($query: String!, $namespace: String, $limit: Int! = 25) {
  recall(query: $query, namespace: $namespace, limit: $limit) {
    score
    memory { ...MemoryFields }
  }
}
${MEMORY_FIELDS}`;

export const TRANSITIONS = `
query Transitions($candidateId: ID!) {
  transitions(candidateId: $candidateId) { id action fromStatus toStatus actor at reason changes }
}`;

export const SETTINGS = `
query Settings {
  policy { enabled minObservations minConfidence description }
  activePersona
  archiveDays
}`;

export const APPROVE = `
mutation Approve($id: ID!, $edit: CandidateEdit, $supersede: ID) {
  approveCandidate(id: $id, edit: $edit, supersede: $supersede) {
    __typename
    ... on Memory { ...MemoryFields }
    ... on UserError { code message }
  }
}
${MEMORY_FIELDS}`;

export const REJECT = `
mutation Reject($id: ID!, $reason: String) {
  rejectCandidate(id: $id, reason: $reason) {
    __typename
    ... on Candidate { id status }
    ... on UserError { code message }
  }
}`;

export const EDIT_CANDIDATE = `
mutation EditCandidate($id: ID!, $edit: CandidateEdit!) {
  editCandidate(id: $id, edit: $edit) {
    __typename
    ... on Candidate { ...CandidateFields }
    ... on UserError { code message }
  }
}
${CANDIDATE_FIELDS}`;

export const BULK_APPROVE = `
mutation BulkApprove($ids: [ID!]!) {
  approveCandidates(ids: $ids) {
    id
    result {
      __typename
      ... on Memory { id }
      ... on UserError { code message }
    }
  }
}`;

export const BULK_REJECT = `
mutation BulkReject($ids: [ID!]!, $reason: String) {
  rejectCandidates(ids: $ids, reason: $reason) {
    id
    result {
      __typename
      ... on Candidate { id status }
      ... on UserError { code message }
    }
  }
}`;

export const UPDATE_MEMORY = `
mutation UpdateMemory($id: ID!, $edit: CandidateEdit!) {
  updateMemory(id: $id, edit: $edit) {
    __typename
    ... on Memory { ...MemoryFields }
    ... on UserError { code message }
  }
}
${MEMORY_FIELDS}`;

export const DELETE_MEMORY = `
mutation DeleteMemory($id: ID!) {
  deleteMemory(id: $id) {
    __typename
    ... on Memory { id }
    ... on UserError { code message }
  }
}`;

export const SET_POLICY = `
mutation SetPolicy($input: AutoApprovePolicyInput!) {
  setAutoApprovePolicy(input: $input) {
    __typename
    ... on AutoApprovePolicy { enabled minObservations minConfidence description }
    ... on UserError { code message }
  }
}`;

export const SET_PERSONA = `
mutation SetPersona($name: String!) {
  setActivePersona(name: $name) {
    __typename
    ... on ActivePersona { name }
    ... on UserError { code message }
  }
}`;

export const SET_ARCHIVE_DAYS = `
mutation SetArchiveDays($days: Int!) {
  setArchiveDays(days: $days) {
    __typename
    ... on ArchiveWindow { days }
    ... on UserError { code message }
  }
}`;

export const ARCHIVE_STALE = `
mutation ArchiveStale($days: Int) {
  archiveStale(olderThanDays: $days) {
    __typename
    ... on ArchiveResult { count }
    ... on UserError { code message }
  }
}`;

export const REVIEW_EVENTS = `
subscription ReviewEvents {
  reviewEvents {
    action namespace actor at candidateId memoryId outcome
    candidate { ...CandidateFields }
    deletedMemory { id supersededBy }
  }
}
${CANDIDATE_FIELDS}`;

// Advanced: the auto-approve policy (off by default), the archive window, the active persona.
import { gql, unwrap, ApiError } from './gql.js';
import * as Q from './queries.js';
import { h, announce } from './dom.js';

export function describePolicy(enabled, minObs, minConf) {
  if (!enabled) return 'Auto-approve is off: every candidate waits for a person.';
  return `Promote candidates seen in ≥ ${minObs} separate conversations with confidence ≥ ${Number(minConf)}.`;
}

function forbidden(err) {
  return err instanceof ApiError && err.code === 'FORBIDDEN'
    ? 'Only an admin token can change this setting.'
    : err.message;
}

export class AdvancedView {
  constructor(root, app) {
    this.root = root;
    this.app = app;
    this.settings = null;
    this.build();
  }

  reset() {
    this.settings = null;
  }

  build() {
    // auto-approve
    this.enabled = h('input', { type: 'checkbox', id: 'policy-enabled', role: 'switch', 'aria-describedby': 'policy-sentence', on: { change: () => this.preview() } });
    this.minObs = h('input', { type: 'number', id: 'policy-min-obs', min: '1', max: '1000', step: '1', inputmode: 'numeric', on: { input: () => this.preview() } });
    this.minConf = h('input', { type: 'number', id: 'policy-min-conf', min: '0', max: '1', step: '0.05', inputmode: 'decimal', on: { input: () => this.preview() } });
    this.pill = h('span', { class: 'pill', id: 'policy-state' });
    this.sentence = h('p', { class: 'sentence', id: 'policy-sentence', 'aria-live': 'polite' });
    this.policyErr = h('p', { class: 'error', role: 'alert', hidden: true });
    this.dirty = h('span', { class: 'muted dirty', hidden: true }, 'Unsaved changes');
    const policyCard = h('form', {
      class: 'card setting', id: 'policy-form', 'aria-labelledby': 'policy-h',
      on: { submit: (e) => { e.preventDefault(); this.savePolicy(); } },
    },
    h('div', { class: 'card-head' }, h('h2', { id: 'policy-h' }, 'Auto-approve'), this.pill),
    h('p', { class: 'muted' }, 'When on, a pending candidate that reaches both thresholds is promoted without a click; its history records the policy as the approver. Keep it off until you trust extraction quality.'),
    h('p', { class: 'muted', id: 'policy-counts' }, 'What counts: independent observations. Each distinct conversation counts once; a proposal made outside any conversation (an agent calling remember, a person adding one) counts once per token. An agent repeating itself is one observation, however often it repeats.'),
    h('label', { class: 'switch', for: 'policy-enabled' }, this.enabled, h('span', { class: 'switch-track', 'aria-hidden': 'true' }), h('span', {}, 'Approve qualifying candidates automatically')),
    h('div', { class: 'editor-row' },
      h('label', { class: 'field', for: 'policy-min-obs' }, h('span', {}, 'Minimum separate conversations'), this.minObs),
      h('label', { class: 'field', for: 'policy-min-conf' }, h('span', {}, 'Minimum confidence (0–1)'), this.minConf)),
    this.sentence,
    this.policyErr,
    h('div', { class: 'editor-actions' }, h('button', { type: 'submit', class: 'btn primary', id: 'policy-save' }, 'Save policy'), this.dirty));

    // archive window
    this.days = h('input', { type: 'number', id: 'archive-days', min: '1', max: '3650', step: '1', inputmode: 'numeric' });
    this.archiveErr = h('p', { class: 'error', role: 'alert', hidden: true });
    const archiveCard = h('form', {
      class: 'card setting', id: 'archive-form', 'aria-labelledby': 'archive-h',
      on: { submit: (e) => { e.preventDefault(); this.saveDays(); } },
    },
    h('h2', { id: 'archive-h' }, 'Archive window'),
    h('p', { class: 'muted' }, 'A pending candidate with no new observation and no edit for this many days is archived. Skim the queue regularly so good candidates do not expire.'),
    h('div', { class: 'editor-row' }, h('label', { class: 'field', for: 'archive-days' }, h('span', {}, 'Days'), this.days)),
    this.archiveErr,
    h('div', { class: 'editor-actions' },
      h('button', { type: 'submit', class: 'btn primary' }, 'Save window'),
      h('button', { type: 'button', class: 'btn', on: { click: () => this.archiveNow() } }, 'Archive stale candidates now')));

    // persona
    this.persona = h('input', { type: 'text', id: 'persona-name', spellcheck: 'false', autocomplete: 'off', maxlength: '128', pattern: '[a-z0-9._/\\-]+' });
    this.personaErr = h('p', { class: 'error', role: 'alert', hidden: true });
    const personaCard = h('form', {
      class: 'card setting', id: 'persona-form', 'aria-labelledby': 'persona-h',
      on: { submit: (e) => { e.preventDefault(); this.savePersona(); } },
    },
    h('h2', { id: 'persona-h' }, 'Active persona'),
    h('p', { class: 'muted' }, 'A memory written without a namespace goes to persona:<active persona>. Keep project facts in workspace: namespaces and personal preferences in persona: ones.'),
    h('div', { class: 'editor-row' }, h('label', { class: 'field grow', for: 'persona-name' }, h('span', {}, 'Persona name (lowercase letters, digits, - _ . /)'), this.persona)),
    this.personaErr,
    h('div', { class: 'editor-actions' }, h('button', { type: 'submit', class: 'btn primary' }, 'Save persona')));

    this.readonly = h('p', { class: 'notice', role: 'note', hidden: true }, 'Read-only: you are signed in with a reviewer token. Changing these settings needs an admin token.');
    this.root.replaceChildren(this.readonly, h('div', { class: 'settings-grid' }, policyCard, archiveCard, personaCard));
  }

  show() { this.refresh(); }

  async refresh() {
    try {
      const data = await gql(Q.SETTINGS);
      this.settings = data;
      const p = data.policy;
      this.enabled.checked = Boolean(p.enabled);
      this.minObs.value = String(p.minObservations);
      this.minConf.value = String(p.minConfidence);
      this.days.value = String(data.archiveDays);
      this.persona.value = data.activePersona || '';
      this.app.setPersona(data.activePersona);
      this.showPolicy(p);
      const admin = String(this.app.viewer?.role || '').toUpperCase() === 'ADMIN';
      this.readonly.hidden = admin;
      for (const el of this.root.querySelectorAll('input, button')) el.disabled = !admin;
    } catch (err) {
      announce(err.message, { error: true });
    }
  }

  showPolicy(p) {
    this.pill.textContent = p.enabled ? 'ON' : 'OFF';
    this.pill.className = `pill ${p.enabled ? 'on' : 'off'}`;
    this.pill.setAttribute('aria-label', `Auto-approve is ${p.enabled ? 'on' : 'off'}`);
    this.sentence.textContent = p.description || describePolicy(p.enabled, p.minObservations, p.minConfidence);
    this.dirty.hidden = true;
  }

  preview() {
    const p = this.settings && this.settings.policy;
    const changed = !p || this.enabled.checked !== Boolean(p.enabled)
      || Number(this.minObs.value) !== Number(p.minObservations) || Number(this.minConf.value) !== Number(p.minConfidence);
    this.dirty.hidden = !changed;
    this.sentence.textContent = describePolicy(this.enabled.checked, this.minObs.value || '?', this.minConf.value || '?')
      + (changed ? ' (after you save)' : '');
  }

  async savePolicy() {
    const input = {
      enabled: this.enabled.checked,
      minObservations: Number.parseInt(this.minObs.value, 10),
      minConfidence: Number.parseFloat(this.minConf.value),
    };
    this.policyErr.hidden = true;
    if (!Number.isInteger(input.minObservations) || input.minObservations < 1) return this.fail(this.policyErr, 'Minimum observations must be a whole number of at least 1.');
    if (!(input.minConfidence >= 0 && input.minConfidence <= 1)) return this.fail(this.policyErr, 'Minimum confidence must be between 0 and 1.');
    try {
      const data = await gql(Q.SET_POLICY, { input });
      const p = unwrap(data.setAutoApprovePolicy);
      this.settings.policy = p;
      this.showPolicy(p);
      announce(p.enabled ? `Auto-approve is on. ${p.description || ''}` : 'Auto-approve is off.');
      this.app.scheduleStats();
      this.app.views.pending.loaded = false;
      this.app.views.approved.invalidate();
    } catch (err) {
      this.fail(this.policyErr, forbidden(err));
    }
    return undefined;
  }

  async saveDays() {
    const days = Number.parseInt(this.days.value, 10);
    this.archiveErr.hidden = true;
    if (!Number.isInteger(days) || days < 1 || days > 3650) return this.fail(this.archiveErr, 'The window must be between 1 and 3650 days.');
    try {
      const data = await gql(Q.SET_ARCHIVE_DAYS, { days });
      unwrap(data.setArchiveDays);
      announce(`Archive window set to ${days} days.`);
    } catch (err) {
      this.fail(this.archiveErr, forbidden(err));
    }
    return undefined;
  }

  async archiveNow() {
    this.archiveErr.hidden = true;
    try {
      const data = await gql(Q.ARCHIVE_STALE, { days: null });
      const r = unwrap(data.archiveStale);
      announce(`Archived ${r.count} stale candidate${r.count === 1 ? '' : 's'}.`);
      this.app.scheduleStats();
      this.app.views.pending.loaded = false;
    } catch (err) {
      this.fail(this.archiveErr, forbidden(err));
    }
  }

  async savePersona() {
    const name = this.persona.value.trim();
    this.personaErr.hidden = true;
    if (!name) return this.fail(this.personaErr, 'Give the persona a name.');
    try {
      const data = await gql(Q.SET_PERSONA, { name });
      unwrap(data.setActivePersona);
      this.app.setPersona(name);
      announce(`Active persona is now ${name}.`);
    } catch (err) {
      this.fail(this.personaErr, forbidden(err));
    }
    return undefined;
  }

  fail(el, message) {
    el.textContent = message;
    el.hidden = false;
    announce(message, { error: true });
  }
}

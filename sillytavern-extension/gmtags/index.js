// gmtags for SillyTavern: the party beside the chat, and each answered tag as a badge.
//
// The game's state is a fold of the visible chat, so this extension keeps none: it sends the
// chat as the page holds it to gmtags (POST /games/<game>/v1/state) and shows the answer. It
// only ever reads SillyTavern's chat: it never writes a message, its `extra` or the chat's
// metadata, and never saves the chat. Badges are display only: the saved text keeps its tags.
//
// Plain DOM, no build step. What it uses of SillyTavern is listed in st_api.json.

const VIEW = 2; // the state view's version this panel reads
const STORE = 'gmtags.panel.'; // localStorage keys of the panel's own settings
const QUICK_MS = 40; // after SillyTavern's own events: they come in bursts of a few ms
const SETTLE_MS = 250; // after a change seen only in the page (a hide, "show more")
const TIMEOUT_MS = 15000;
const RETRY_MS = [1000, 2000, 3000, 5000]; // while gmtags is unreachable, then every 5 s
const SHORT = 90; // characters of an answer a badge shows
const ICONS = {
    inventory: '🎒', skill_check: '🎲', place: '📍', loot: '💰', sheet: '📜', combat: '⚔️',
    attack: '🗡️',
};
const GAME_PATH = /^(.*?)\/games\/([A-Za-z0-9][A-Za-z0-9_.-]{0,63})(?:\/v1)?\/*$/;
const SAMPLE_TAG = '[inventory: action="pay" amount="1 shilling" who="Ada" | ok="true" text="Paid."]';
const NONCE = Math.random().toString(36).slice(2, 10).replace(/[^a-z0-9]/g, 'x');
const TOKEN = new RegExp(`gmtagsbadge${NONCE}n(\\d+)e`, 'g');
const BASE_GONE = Symbol('gmtags no longer knows the chat the request builds on');

const panel = {
    root: null, body: null, status: null, pinned: null, settings: null,
};
const state = {
    live: null, // the last view of the chat
    pinnedAt: null, // the message the panel shows the game after, when a badge was clicked
    pinnedView: null,
    sentLive: null, // what the live view was asked of (its signature)
    sentPinned: null, // and the pinned one
    base: null, // the chat gmtags read last: its name there ("base") and its signature
    seq: 0,
    inflight: null,
    status: 'idle',
    generating: false,
    retry: 0,
    retryTimer: null,
    timer: null,
    answers: new Map(), // chat index -> answers of that message
    tokens: new Map(), // path A: message id -> answers whose tokens the message holds now
    rendered: new Map(), // path A: message id -> signature of the badges it was rendered with
};

function ctx() {
    return globalThis.SillyTavern.getContext();
}

function setting(name, fallback = '') {
    try {
        return localStorage.getItem(STORE + name) ?? fallback;
    } catch {
        return fallback;
    }
}

function setSetting(name, value) {
    try {
        if (value === '' || value === null) {
            localStorage.removeItem(STORE + name);
        } else {
            localStorage.setItem(STORE + name, String(value));
        }
    } catch {
        // a browser that keeps nothing: the settings last for this page
    }
}

function raw() {
    return setting('raw') === '1';
}

// --- where gmtags is ---------------------------------------------------------------------

/** The custom endpoint SillyTavern sends chat completions to (API Connections). */
function customEndpoint() {
    const context = ctx();
    const fromContext = context.chatCompletionSettings?.custom_url;
    if (typeof fromContext === 'string' && fromContext) {
        return fromContext;
    }
    const input = document.querySelector('#custom_api_url_text');
    return input && typeof input.value === 'string' ? input.value : '';
}

/** gmtags' base URL and game, from the panel's setting or the custom endpoint. */
function target() {
    const given = setting('url').trim();
    const url = given || customEndpoint().trim();
    if (!url) {
        return { error: 'Set the Custom Endpoint in API Connections to gmtags (…/games/<game>/v1), or the gmtags URL in this panel\'s settings (⚙).' };
    }
    const found = GAME_PATH.exec(url);
    if (!found) {
        return { error: `${url} names no game: gmtags' address is …/games/<game>/v1 (⚙ to set it).` };
    }
    let base = found[1];
    const shown = `${base}/games/${found[2]}/v1`;
    if (setting('proxy') === '1') {
        base = `${location.origin}/proxy/${base}`;
    }
    return {
        game: found[2], shown,
        state: `${base}/games/${encodeURIComponent(found[2])}/v1/state`,
        health: `${base}/healthz`,
    };
}

// --- the chat as gmtags reads it ---------------------------------------------------------

/** What gmtags reads of a message: nothing else of it leaves the page. */
function slim(message) {
    const out = {
        name: message.name, is_user: message.is_user, is_system: message.is_system,
        mes: message.mes,
    };
    if (message.swipes !== undefined) {
        out.swipes = message.swipes;
        out.swipe_id = message.swipe_id;
    }
    if (message.extra && typeof message.extra.type === 'string') {
        out.extra = { type: message.extra.type };
    }
    return out;
}

/** The first message on screen (SillyTavern shows the last ones; "show more" adds some). */
function firstShown() {
    let first = null;
    for (const element of document.querySelectorAll('#chat .mes[mesid]')) {
        const id = Number(element.getAttribute('mesid'));
        if (Number.isInteger(id) && (first === null || id < first)) {
            first = id;
        }
    }
    return first ?? 0;
}

const STRIDE = 7; // what a signature keeps of each message

/** What a view depends on: where it is asked, from which message, and each message's
 * (is_user, is_system, swipe_id, mes, swipes, name, extra.type); the same strings compare by
 * reference first. */
function signature(chat, where, after, pinnedAt) {
    const messages = [];
    const end = pinnedAt === null ? chat.length : Math.min(chat.length, pinnedAt + 1);
    for (let i = 0; i < end; i++) {
        const m = chat[i];
        messages.push(m.is_user, m.is_system, m.swipe_id, m.mes,
            m.swipes ? m.swipes.length : -1, m.name, m.extra?.type);
    }
    return { where, after, pinnedAt, messages };
}

/** How many first messages two signatures' chats share. */
function sharedMessages(a, b) {
    const end = Math.min(a.length, b.length);
    let i = 0;
    while (i < end && a[i] === b[i]) {
        i++;
    }
    return Math.floor(i / STRIDE);
}

function sameSignature(a, b) {
    if (!a || !b || a.where !== b.where || a.after !== b.after || a.pinnedAt !== b.pinnedAt
        || a.messages.length !== b.messages.length) {
        return false;
    }
    for (let i = 0; i < a.messages.length; i++) {
        if (a.messages[i] !== b.messages[i]) {
            return false;
        }
    }
    return true;
}

// --- asking gmtags -------------------------------------------------------------------------

function schedule(delay) {
    clearTimeout(state.timer);
    state.timer = setTimeout(() => { state.timer = null; refresh(false); }, delay);
}

async function post(where, body) {
    const headers = { 'content-type': 'application/json' };
    const key = setting('key');
    if (key) {
        headers['x-gmtags-key'] = key;
    }
    state.inflight?.abort();
    const controller = new AbortController();
    state.inflight = controller;
    const timeout = setTimeout(() => controller.abort(), TIMEOUT_MS);
    try {
        return await fetch(where, { method: 'POST', headers, body, signal: controller.signal });
    } finally {
        clearTimeout(timeout);
        if (state.inflight === controller) {
            state.inflight = null;
        }
    }
}

async function refresh(force) {
    if (state.generating || !panel.root) {
        return;
    }
    const where = target();
    if (where.error) {
        dropAnswersOnTheirWay(); // they come from where gmtags no longer is
        setStatus('setup', where.error);
        forgetView();
        return;
    }
    const chat = ctx().chat || [];
    if (state.pinnedAt !== null && state.pinnedAt >= chat.length) {
        state.pinnedAt = null; // the message it was pinned to is gone
        state.pinnedView = null;
    }
    const live = signature(chat, where.state, firstShown(), null);
    const pinned = state.pinnedAt === null ? null : signature(chat, where.state, 0, state.pinnedAt);
    const stale = force || state.status !== 'ok';
    const jobs = [];
    if (stale || !sameSignature(live, state.sentLive)) {
        jobs.push(live);
    }
    if (pinned && (stale || !sameSignature(pinned, state.sentPinned))) {
        jobs.push(pinned);
    }
    if (!jobs.length) {
        decorateAll();
        return;
    }
    const seq = ++state.seq;
    for (const wanted of jobs) {
        const shown = wanted.pinnedAt === null ? chat : chat.slice(0, wanted.pinnedAt + 1);
        // Only what changed since the chat gmtags read last ("base"): a long chat is a
        // megabyte to write and send, most of the time an update took.
        const base = state.base?.where === where.state ? state.base : null;
        const keep = base ? sharedMessages(base.messages, wanted.messages) : 0;
        const request = keep ? { chat: shown.slice(keep).map(slim), base: { view: base.token, keep } }
            : { chat: shown.map(slim) };
        if (wanted.after) {
            request.after = wanted.after;
        }
        let answer = await ask(where, JSON.stringify(request), seq);
        if (answer === BASE_GONE) {
            state.base = null; // gmtags restarted, or another worker answered: the whole chat
            const whole = { chat: shown.map(slim) };
            if (wanted.after) {
                whole.after = wanted.after;
            }
            answer = await ask(where, JSON.stringify(whole), seq);
        }
        if (answer === null || answer === BASE_GONE) {
            return; // a newer request took its place, or gmtags did not answer: said so
        }
        state.base = { token: answer.base, where: where.state, messages: wanted.messages };
        if (wanted.pinnedAt === null) {
            state.live = answer;
            state.sentLive = wanted;
            indexAnswers(answer);
        } else {
            state.pinnedView = answer;
            state.sentPinned = wanted;
        }
        state.retry = 0;
        setStatus('ok', `${answer.game} at ${where.shown} · gmtags ${answer.gmtags}`);
    }
    render();
    decorateAll();
    panel.root.dataset.updated = String(seq);
    document.dispatchEvent(new CustomEvent('gmtags:updated', { detail: { seq } }));
}

/** gmtags' view for one request, or null when a newer request replaced it or gmtags did not
 * give one (the status says why; an unreachable gmtags is asked again by itself). */
async function ask(where, body, seq) {
    let response;
    try {
        response = await post(where.state, body);
    } catch {
        if (seq === state.seq) {
            unreachable(where);
        }
        return null;
    }
    let answer = null;
    try {
        answer = await response.json();
    } catch {
        answer = null;
    }
    if (seq !== state.seq) {
        return null;
    }
    if (response.status === 409 && answer?.error?.code === 'base_unknown') {
        return BASE_GONE;
    }
    if (!response.ok || !answer) {
        const said = answer?.error?.message || `HTTP ${response.status}`;
        const hint = response.status === 401 ? ' Set the gmtags key in this panel\'s settings (⚙).' : '';
        setStatus('error', `gmtags (${where.shown}) answered ${response.status}: ${said}.${hint}`);
        forgetView();
        if (response.status >= 500) {
            retryLater();
        }
        return null;
    }
    if (answer.view !== VIEW) {
        setStatus('error', `gmtags ${answer.gmtags || ''} sends view ${answer.view}; this panel reads view ${VIEW}: install the panel of that gmtags (gmtags sillytavern install).`);
        forgetView();
        return null;
    }
    return answer;
}

/** Answers still on their way are of a chat or a gmtags the page no longer shows. */
function dropAnswersOnTheirWay() {
    state.seq += 1;
    state.inflight?.abort();
}

function unreachable(where) {
    setStatus('down', `gmtags is unreachable at ${where.shown}: tags show as written. Retrying by itself…`);
    forgetView();
    retryLater();
}

function retryLater() {
    clearTimeout(state.retryTimer);
    const delay = RETRY_MS[Math.min(state.retry, RETRY_MS.length - 1)];
    state.retry += 1;
    state.retryTimer = setTimeout(() => refresh(true), delay);
}

function forgetView() {
    state.live = null;
    state.pinnedView = null;
    state.sentLive = null;
    state.sentPinned = null;
    state.answers = new Map();
    render();
    decorateAll();
}

function setStatus(kind, text) {
    state.status = kind;
    if (!panel.root) {
        return;
    }
    panel.root.dataset.status = kind;
    panel.status.textContent = text;
}

function indexAnswers(view) {
    const byMessage = new Map();
    view.answers.forEach((answer, index) => {
        const id = view.chatIndex ? view.chatIndex[answer.message] : answer.message;
        if (!byMessage.has(id)) {
            byMessage.set(id, []);
        }
        byMessage.get(id).push({ ...answer, index });
    });
    state.answers = byMessage;
}

// --- badges ---------------------------------------------------------------------------------

function short(text) {
    return text.length > SHORT ? `${text.slice(0, SHORT - 1)}…` : text;
}

/** A badge: the kind's icon and the short answer; refused ones red with their reason; the
 * raw tag on hover. ``prefix`` is "custom-" where the badge is put in the page by this
 * extension, "" where SillyTavern's sanitizer adds it (path A). */
function badge(answer, id, prefix) {
    const element = document.createElement('span');
    element.className = `${prefix}gmtags-badge ${prefix}gmtags-${answer.ok ? 'ok' : 'refused'}`;
    element.title = answer.tag.raw;
    element.dataset.gmtagsMessage = String(id);
    element.dataset.gmtagsAnswer = String(answer.index);
    const icon = document.createElement('span');
    icon.textContent = ICONS[answer.tag.kind] || '🏷️';
    element.append(icon);
    if (!answer.ok) {
        const reason = document.createElement('span');
        reason.className = `${prefix}gmtags-reason`;
        reason.textContent = answer.reason || 'refused';
        element.append(reason);
    }
    const text = document.createElement('span');
    text.textContent = short(answer.text);
    element.append(text);
    return element;
}

/** ``mes`` with each answered tag (found by its raw text, in order) swapped for a token that
 * formatting leaves alone, and the answers in token order. */
function tokenize(mes, answers) {
    let out = '';
    let cursor = 0;
    const tokens = [];
    for (const answer of answers) {
        const at = mes.indexOf(answer.tag.raw, cursor);
        if (at < 0) {
            continue;
        }
        out += mes.slice(cursor, at) + `gmtagsbadge${NONCE}n${tokens.length}e`;
        tokens.push(answer);
        cursor = at + answer.tag.raw.length;
    }
    return { text: out + mes.slice(cursor), tokens };
}

/** The answers a message shows as badges now, or null for its text as written. */
function badgesFor(id) {
    if (state.status !== 'ok' || raw()) {
        return null;
    }
    const message = (ctx().chat || [])[id];
    const answers = state.answers.get(id);
    if (!message || !answers || !answers.length || message.extra?.display_text) {
        return null;
    }
    return answers;
}

function badgeSignature(id, answers) {
    const message = ctx().chat[id];
    return answers ? `${message.mes}\u0000${answers.map(a => `${a.tag.raw}\u0001${a.ok}\u0001${a.text}\u0001${a.index}`).join('\u0002')}` : '';
}

function hasHooks() {
    const formatter = ctx().messageFormatter;
    return Boolean(formatter && typeof formatter.addHook === 'function'
        && typeof ctx().updateMessageBlock === 'function');
}

function decorateAll() {
    const chatElement = document.querySelector('#chat');
    if (!chatElement) {
        return;
    }
    if (hasHooks()) {
        repaintChanged();
        return;
    }
    for (const element of chatElement.querySelectorAll('.mes[mesid]')) {
        decorate(element);
    }
    observer?.takeRecords(); // what this changed is not a change of the chat
}

/** Path B (SillyTavern without message formatting hooks): the message is formatted again by
 * SillyTavern's own messageFormatting from its text with tokens, and the tokens swapped for
 * badges; SillyTavern's own rendering is kept to put back. */
function decorate(element) {
    const id = Number(element.getAttribute('mesid'));
    const text = element.querySelector('.mes_text');
    if (!text || text.querySelector('textarea') || !Number.isInteger(id)) {
        return; // being edited
    }
    const answers = state.generating && id === ctx().chat.length - 1 ? null : badgesFor(id);
    const done = text.gmtags;
    const present = text.querySelectorAll('.custom-gmtags-badge').length;
    const intact = done && done.count === present && present > 0;
    if (!answers) {
        if (intact) {
            text.innerHTML = done.original;
        }
        text.gmtags = null;
        return;
    }
    const wanted = badgeSignature(id, answers);
    if (intact && done.sig === wanted) {
        return;
    }
    const original = intact ? done.original : text.innerHTML;
    const message = ctx().chat[id];
    const { text: tokenized, tokens } = tokenize(message.mes, answers);
    if (!tokens.length) {
        if (intact) {
            text.innerHTML = original;
        }
        text.gmtags = null;
        return;
    }
    text.innerHTML = ctx().messageFormatting(tokenized, message.name, message.is_system,
        message.is_user, id);
    const count = swapTokens(text, tokens, id);
    text.gmtags = { sig: wanted, original, count };
}

function swapTokens(root, tokens, id) {
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    const found = [];
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        TOKEN.lastIndex = 0;
        if (TOKEN.test(node.nodeValue)) {
            found.push(node);
        }
    }
    let count = 0;
    for (const node of found) {
        const parts = node.nodeValue.split(TOKEN);
        const fragment = document.createDocumentFragment();
        parts.forEach((part, index) => {
            if (index % 2 === 0) {
                if (part) {
                    fragment.append(document.createTextNode(part));
                }
            } else if (tokens[Number(part)]) {
                fragment.append(badge(tokens[Number(part)], id, 'custom-'));
                count += 1;
            }
        });
        node.replaceWith(fragment);
    }
    return count;
}

// Path A (SillyTavern with messageFormatter, 2026-05 on): tokens go in before the regex
// scripts run, badges replace them after Markdown, and SillyTavern sanitizes the result.

function beforeRegex(mes, hook) {
    const id = hook?.messageId;
    if (!Number.isInteger(id) || id < 0 || typeof mes !== 'string') {
        return mes; // streaming (-1), or not a chat message
    }
    const answers = state.generating && id === ctx().chat.length - 1 ? null : badgesFor(id);
    if (!answers) {
        state.tokens.delete(id);
        return mes;
    }
    const { text, tokens } = tokenize(mes, answers);
    state.tokens.set(id, tokens);
    state.rendered.set(id, badgeSignature(id, answers));
    return text;
}

function afterMarkdown(html, hook) {
    const id = hook?.messageId;
    const tokens = state.tokens.get(id);
    if (!tokens || typeof html !== 'string') {
        return html;
    }
    state.tokens.delete(id);
    return html.replace(TOKEN, (_, n) => (tokens[Number(n)] ? badge(tokens[Number(n)], id, '').outerHTML : ''));
}

/** Path A: the messages on screen whose badges are not what they should be now are rendered
 * again by SillyTavern (updateMessageBlock renders; it saves nothing). */
function repaintChanged() {
    const context = ctx();
    for (const element of document.querySelectorAll('#chat .mes[mesid]')) {
        const id = Number(element.getAttribute('mesid'));
        if (!Number.isInteger(id) || !context.chat[id] || element.querySelector('.mes_text textarea')) {
            continue;
        }
        const answers = badgesFor(id);
        const wanted = badgeSignature(id, answers);
        if ((state.rendered.get(id) || '') !== wanted) {
            state.rendered.set(id, wanted);
            context.updateMessageBlock(id, context.chat[id]);
        }
    }
    observer?.takeRecords();
}

// --- the panel ------------------------------------------------------------------------------

function node(tag, text, className) {
    const element = document.createElement(tag);
    if (text !== undefined && text !== null) {
        element.textContent = String(text);
    }
    if (className) {
        element.className = className;
    }
    return element;
}

function render() {
    if (!panel.body) {
        return;
    }
    const view = state.pinnedView || state.live;
    panel.pinned.hidden = state.pinnedAt === null;
    if (state.pinnedAt !== null) {
        panel.pinned.querySelector('.gmtags-pinned-text').textContent = `The game after message ${state.pinnedAt}.`;
    }
    panel.body.replaceChildren();
    const warning = regexWarning();
    if (warning) {
        panel.body.append(node('p', warning, 'gmtags-warning'));
    }
    if (!view) {
        return;
    }
    const changes = state.pinnedView ? { characters: {}, place: false } : view.changes;
    const { party } = view;
    if (party.place) {
        const place = node('p', `📍 ${party.place.name}${party.place.size ? ` (${party.place.size})` : ''}, day ${party.place.day}`);
        if (changes.place) {
            place.classList.add('gmtags-changed');
        }
        panel.body.append(place);
    }
    if (party.encounter) {
        panel.body.append(fightSection(party.encounter));
    }
    for (const character of party.characters) {
        panel.body.append(characterSection(character, changes.characters[character.name] || {}));
    }
    panel.body.append(refusedSection(view));
    if (view.diagnostics.length) {
        panel.body.append(diagnosticsSection(view));
    }
}

function fightSection(encounter) {
    const section = node('section');
    section.dataset.gmtagsSection = 'fight';
    section.append(node('h3', `⚔️ Fight, round ${encounter.round}`));
    const table = node('table');
    for (const one of encounter.order) {
        const row = node('tr', null, one.down ? 'gmtags-removed' : '');
        row.append(node('td', one.name), node('td', one.side === 'foes' ? 'foe' : 'hero', 'gmtags-muted'),
            node('td', `init ${one.initiative}`, 'gmtags-muted'),
            node('td', one.hp === null ? '' : `${one.hp}/${one.hpMax}`, 'gmtags-count'),
            node('td', one.conditions.join(', ')));
        table.append(row);
    }
    section.append(table);
    if (encounter.lastAttacks.length) {
        section.append(node('h4', 'Last round'));
        const list = node('ul');
        for (const attack of encounter.lastAttacks) {
            const item = node('li', attack.text);
            if (!attack.ok) {
                item.prepend(node('span', `${attack.reason} `, 'gmtags-reason'));
            }
            list.append(item);
        }
        section.append(list);
    }
    return section;
}

function characterSection(character, changed) {
    const section = node('section');
    section.dataset.gmtagsCharacter = character.name;
    section.append(node('h3', character.name)); // hit points are among the pools
    if (character.purse.length) {
        const purse = node('p', `💰 ${character.purse.map(f => `${f.label}: ${f.coins.map(c => `${c.count} ${c.label}`).join(', ')} (${f.worth})`).join('; ')}`);
        purse.dataset.gmtagsPart = 'purse';
        if (changed.purse) {
            purse.classList.add('gmtags-changed');
        }
        section.append(purse);
    }
    if (character.pools.length) {
        const pools = node('p', character.pools.join(' · '));
        pools.dataset.gmtagsPart = 'pools';
        if (changed.pools) {
            pools.classList.add('gmtags-changed');
        }
        section.append(pools);
    }
    if (character.conditions.length || changed.conditions) {
        const conditions = node('p', character.conditions.length ? `Conditions: ${character.conditions.join(', ')}` : 'No conditions');
        if (changed.conditions) {
            conditions.classList.add('gmtags-changed');
        }
        section.append(conditions);
    }
    const marks = new Map((changed.bag || []).map(row => [row.label, row]));
    const table = node('table');
    table.dataset.gmtagsPart = 'bag';
    for (const stack of character.bag) {
        const mark = marks.get(stack.label);
        const row = node('tr', null, mark ? `gmtags-${mark.change}` : '');
        row.dataset.gmtagsStack = stack.label;
        const count = mark ? `${stack.count} (was ${mark.was})` : String(stack.count);
        row.append(node('td', stack.label), node('td', count, 'gmtags-count'));
        if (mark) {
            row.title = `${mark.change} by the last GM reply`;
        }
        table.append(row);
    }
    for (const row of changed.bag || []) {
        if (row.change === 'removed') {
            const gone = node('tr', null, 'gmtags-removed');
            gone.dataset.gmtagsStack = row.label;
            gone.append(node('td', row.label), node('td', `0 (was ${row.was})`, 'gmtags-count'));
            table.append(gone);
        }
    }
    section.append(table);
    const sheet = node('details');
    sheet.append(node('summary', 'Sheet'));
    const lines = [
        ...character.sheet.abilities.map(a => `${a.label} ${a.score}`),
        ...character.sheet.skills.map(s => `${s.label}: ${s.tier}`),
        ...character.sheet.saves.map(s => `${s.label} (save): ${s.tier}`),
    ];
    sheet.append(node('p', lines.join(' · ') || 'nothing on the sheet'));
    section.append(sheet);
    return section;
}

function refusedSection(view) {
    const section = node('section');
    section.dataset.gmtagsSection = 'refused';
    section.append(node('h3', view.refused.length ? `Refused tags (${view.refused.length})` : 'No refused tags'));
    const list = node('ul', null, 'gmtags-refused-list');
    for (const index of view.refused.slice(-30).reverse()) {
        const answer = view.answers[index];
        const id = view.chatIndex ? view.chatIndex[answer.message] : answer.message;
        const item = node('li');
        item.append(node('span', `#${id} `, 'gmtags-muted'), node('span', `${answer.reason} `, 'gmtags-reason'), node('span', answer.text));
        item.title = answer.tag.raw;
        item.addEventListener('click', () => scrollToMessage(id));
        list.append(item);
    }
    section.append(list);
    return section;
}

function diagnosticsSection(view) {
    const section = node('details', null, 'gmtags-diagnostics');
    section.dataset.gmtagsSection = 'diagnostics';
    section.append(node('summary', `Notes on the chat (${view.diagnostics.length})`));
    const list = node('ul');
    for (const diagnostic of view.diagnostics.slice(-50)) {
        const where = diagnostic.message === null ? `line ${diagnostic.line}` : `#${view.chatIndex ? view.chatIndex[diagnostic.message] : diagnostic.message}`;
        list.append(node('li', `${where} ${diagnostic.code}: ${diagnostic.text}`));
    }
    section.append(list);
    return section;
}

function scrollToMessage(id) {
    document.querySelector(`#chat .mes[mesid="${id}"]`)?.scrollIntoView({ block: 'center' });
}

/** A regex script that rewrites tags in the saved chat or the prompt takes them out of the
 * game: say so (only display-only scripts, "Alter Chat Display", are safe). */
function regexWarning() {
    const context = ctx();
    const scripts = [...(context.extensionSettings?.regex || [])];
    const character = context.characters?.[context.characterId];
    scripts.push(...(character?.data?.extensions?.regex_scripts || []));
    const risky = [];
    for (const script of scripts) {
        if (!script || script.disabled || script.markdownOnly || script.promptOnly || !script.findRegex) {
            continue;
        }
        const parts = /^\/([\s\S]+)\/([dgimsuvy]*)$/.exec(script.findRegex);
        try {
            const pattern = parts ? new RegExp(parts[1], parts[2].replace(/[gy]/g, '')) : new RegExp(script.findRegex);
            if (pattern.test(SAMPLE_TAG)) {
                risky.push(script.scriptName || script.findRegex);
            }
        } catch {
            // not a pattern this browser reads: SillyTavern will not run it either
        }
    }
    return risky.length ? `Regex script ${risky.join(', ')} changes tags in the saved chat or the prompt, which takes them out of the game: tick "Alter Chat Display" only, or turn it off (this panel shows the tags).` : '';
}

// --- setting up -------------------------------------------------------------------------------

function pin(id) {
    state.pinnedAt = id;
    state.pinnedView = null;
    state.sentPinned = null;
    openPanel();
}

function follow() {
    state.pinnedAt = null;
    state.pinnedView = null;
    state.sentPinned = null;
    render();
}

function openPanel() {
    panel.root.hidden = false;
    setSetting('open', '1');
    render();
    refresh(false);
}

function togglePanel() {
    if (panel.root.hidden) {
        openPanel();
    } else {
        panel.root.hidden = true;
        setSetting('open', '');
    }
}

function makeDraggable(handle, root) {
    let start = null;
    handle.addEventListener('pointerdown', (event) => {
        if (event.target.closest('button') || root.classList.contains('gmtags-mobile')) {
            return;
        }
        const box = root.getBoundingClientRect();
        start = { x: event.clientX - box.left, y: event.clientY - box.top };
        handle.setPointerCapture(event.pointerId);
    });
    handle.addEventListener('pointermove', (event) => {
        if (!start) {
            return;
        }
        root.style.left = `${Math.max(0, event.clientX - start.x)}px`;
        root.style.top = `${Math.max(0, event.clientY - start.y)}px`;
        root.style.right = 'auto';
    });
    handle.addEventListener('pointerup', () => {
        if (start) {
            setSetting('position', `${root.style.left},${root.style.top}`);
        }
        start = null;
    });
}

async function buildPanel() {
    const html = await (await fetch(new URL('./panel.html', import.meta.url))).text();
    const template = document.createElement('template');
    template.innerHTML = html; // this extension's own file, never chat text
    const root = template.content.firstElementChild;
    (document.querySelector('#movingDivs') || document.body).append(root);
    panel.root = root;
    panel.body = root.querySelector('.gmtags-body');
    panel.status = root.querySelector('.gmtags-status');
    panel.pinned = root.querySelector('.gmtags-pinned');
    panel.settings = root.querySelector('.gmtags-settings');
    if (ctx().isMobile?.()) {
        root.classList.add('gmtags-mobile');
    } else {
        const [left, top] = setting('position').split(',');
        if (left && top) {
            Object.assign(root.style, { left, top, right: 'auto' });
        }
    }
    makeDraggable(root.querySelector('.gmtags-head'), root);
    const rawButton = root.querySelector('[data-gmtags="raw"]');
    rawButton.setAttribute('aria-pressed', String(raw()));
    rawButton.addEventListener('click', () => {
        setSetting('raw', raw() ? '' : '1');
        rawButton.setAttribute('aria-pressed', String(raw()));
        decorateAll();
    });
    root.querySelector('[data-gmtags="settings"]').addEventListener('click', (event) => {
        panel.settings.hidden = !panel.settings.hidden;
        event.currentTarget.setAttribute('aria-pressed', String(!panel.settings.hidden));
    });
    root.querySelector('[data-gmtags="close"]').addEventListener('click', togglePanel);
    root.querySelector('[data-gmtags="follow"]').addEventListener('click', follow);
    for (const input of root.querySelectorAll('[data-gmtags-setting]')) {
        const name = input.dataset.gmtagsSetting;
        if (input.type === 'checkbox') {
            input.checked = setting(name) === '1';
        } else {
            input.value = setting(name);
        }
        input.addEventListener('change', () => {
            setSetting(name, input.type === 'checkbox' ? (input.checked ? '1' : '') : input.value.trim());
            refresh(true);
        });
    }
    root.hidden = setting('open') !== '1';
}

function addMenuItem() {
    const item = document.createElement('div');
    item.id = 'gmtags_wand';
    item.className = 'list-group-item flex-container flexGap5';
    const icon = document.createElement('div');
    icon.className = 'fa-solid fa-dice-d20 extensionsMenuExtensionButton';
    item.append(icon, document.createTextNode('gmtags: the party'));
    item.addEventListener('click', togglePanel);
    document.querySelector('#extensionsMenu').append(item);
}

/** An element that may not be in the page yet (SillyTavern adds the extensions menu while it
 * starts). */
function whenPresent(selector) {
    return new Promise((resolve) => {
        const found = document.querySelector(selector);
        if (found) {
            resolve(found);
            return;
        }
        const watcher = new MutationObserver(() => {
            const element = document.querySelector(selector);
            if (element) {
                watcher.disconnect();
                resolve(element);
            }
        });
        watcher.observe(document.body, { childList: true, subtree: true });
    });
}

let observer = null;

function listen() {
    const context = ctx();
    const types = context.eventTypes || {};
    const on = (name, handler) => {
        if (types[name]) {
            context.eventSource.on(types[name], handler);
        }
    };
    on('CHAT_CHANGED', () => {
        dropAnswersOnTheirWay();
        state.pinnedAt = null;
        state.pinnedView = null;
        state.live = null;
        state.sentLive = null;
        state.sentPinned = null;
        state.answers = new Map();
        state.rendered = new Map();
        state.generating = false;
        render();
        schedule(QUICK_MS);
    });
    on('GENERATION_STARTED', (type, _options, dryRun) => {
        if (!dryRun && type !== 'quiet') {
            state.generating = true;
        }
    });
    for (const name of ['GENERATION_ENDED', 'GENERATION_STOPPED']) {
        on(name, () => {
            state.generating = false;
            schedule(QUICK_MS);
        });
    }
    for (const name of ['USER_MESSAGE_RENDERED', 'CHARACTER_MESSAGE_RENDERED', 'MESSAGE_SWIPED',
        'MESSAGE_EDITED', 'MESSAGE_UPDATED', 'MESSAGE_DELETED', 'MORE_MESSAGES_LOADED']) {
        on(name, () => schedule(QUICK_MS));
    }
    const chat = document.querySelector('#chat');
    observer = new MutationObserver(() => {
        if (!state.timer) {
            schedule(SETTLE_MS);
        }
    });
    observer.observe(chat, {
        childList: true, subtree: true, attributes: true,
        attributeFilter: ['is_system', 'mesid', 'swipeid'],
    });
    chat.addEventListener('click', (event) => {
        const clicked = event.target.closest?.('.custom-gmtags-badge');
        if (clicked) {
            event.stopPropagation();
            pin(Number(clicked.dataset.gmtagsMessage));
        }
    });
    const formatter = context.messageFormatter;
    if (hasHooks()) {
        const stage = formatter.stage || {};
        formatter.addHook(beforeRegex, { stage: stage.BEFORE_REGEX || 'beforeRegex' });
        formatter.addHook(afterMarkdown, { stage: stage.AFTER_MARKDOWN || 'afterMarkdown' });
    }
}

async function init() {
    await whenPresent('#chat');
    await buildPanel();
    listen();
    await whenPresent('#extensionsMenu');
    addMenuItem();
    refresh(true);
}

init().catch(failure => console.error('gmtags panel could not start', failure));

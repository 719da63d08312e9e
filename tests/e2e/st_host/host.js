// A stand-in for SillyTavern's page, for the gmtags panel's browser tests (issue 41).
//
// It offers exactly the SillyTavern API the panel uses (sillytavern-extension/gmtags/st_api.json):
// SillyTavern.getContext() with the chat, an event emitter and SillyTavern's event names,
// messageFormatting with the hazards real SillyTavern has ("…" becomes <q>, *x* <em>,
// private-use characters are dropped, classes are prefixed "custom-"), #chat .mes[mesid]
// .mes_text, #movingDivs, #extensionsMenu and the custom endpoint field. ?path=a adds the
// messageFormatter hooks and updateMessageBlock of SillyTavern from 2026-05 on.
//
// It plays SillyTavern's part as 1.12.6 does: replies come from its server (which asks a real
// `gmtags serve`), are streamed into the page, and the chat is saved after each change as
// SillyTavern saves it (header line, then JSON.stringify of each message). It keeps its own
// copy of every message as it last changed it, which the panel cannot reach: the test
// compares that copy with the saved file, so a write by the panel into the chat shows.

const params = new URLSearchParams(location.search);
const PATH_A = params.get('path') === 'a';
const MOBILE = params.get('mobile') === '1';
const TRUNCATE = Number(params.get('truncate') || 1000);
const SEND_DATE = 'July 4, 2024 3:00pm';

const eventTypes = {
    CHAT_CHANGED: 'chat_id_changed',
    USER_MESSAGE_RENDERED: 'user_message_rendered',
    CHARACTER_MESSAGE_RENDERED: 'character_message_rendered',
    MESSAGE_SWIPED: 'message_swiped',
    MESSAGE_EDITED: 'message_edited',
    MESSAGE_UPDATED: 'message_updated',
    MESSAGE_DELETED: 'message_deleted',
    GENERATION_STARTED: 'generation_started',
    GENERATION_ENDED: 'generation_ended',
    GENERATION_STOPPED: 'generation_stopped',
};
if (PATH_A) {
    eventTypes.MORE_MESSAGES_LOADED = 'more_messages_loaded';
}

class EventEmitter {
    constructor() {
        this.events = {};
    }

    on(event, listener) {
        (this.events[event] ||= []).push(listener);
    }

    async emit(event, ...args) {
        for (const listener of this.events[event] || []) {
            try {
                await listener(...args);
            } catch (failure) {
                console.error(failure);
            }
        }
    }
}

const eventSource = new EventEmitter();
const chat = [];
let header = {};
let record = []; // the host's own copies: JSON of each message as the host last changed it
let shownFrom = 0;
let pause = null; // a promise the stream waits on, when a test wants to look mid-stream
let resumeStream = null;

const hooks = { beforeRegex: [], afterRegex: [], afterMarkdown: [] };
const messageFormatter = {
    stage: { BEFORE_REGEX: 'beforeRegex', AFTER_REGEX: 'afterRegex', AFTER_MARKDOWN: 'afterMarkdown' },
    order: { EARLIEST: -1000, EARLY: -100, NORMAL: 0, LATE: 100, LATEST: 1000 },
    addHook(fn, { stage = 'afterMarkdown', order = 0 } = {}) {
        hooks[stage].push({ fn, order });
        hooks[stage].sort((a, b) => a.order - b.order);
    },
};

function runStage(stage, text, context) {
    for (const { fn } of hooks[stage]) {
        try {
            const out = fn(text, Object.freeze({ ...context, stage }));
            if (typeof out === 'string') {
                text = out;
            }
        } catch (failure) {
            console.error(failure);
        }
    }
    return text;
}

function escapeHtml(text) {
    return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
}

function sanitize(html) {
    const template = document.createElement('template');
    template.innerHTML = html;
    for (const element of template.content.querySelectorAll('*')) {
        if (element.tagName === 'SCRIPT' || element.tagName === 'STYLE') {
            element.remove();
            continue;
        }
        for (const attribute of [...element.attributes]) {
            if (attribute.name.startsWith('on')) {
                element.removeAttribute(attribute.name);
            } else if (attribute.name === 'class') {
                element.setAttribute('class', attribute.value.split(' ').filter(Boolean)
                    .map(name => `custom-${name}`).join(' '));
            }
        }
    }
    return template.innerHTML;
}

function messageFormatting(mes, chName, isSystem, isUser, messageId) {
    if (!mes) {
        return '';
    }
    const context = { ch_name: chName, isSystem, isUser, messageId, isReasoning: false };
    if (PATH_A) {
        mes = runStage('beforeRegex', mes, context);
    }
    mes = mes.replace(/[\uE000-\uF8FF]/g, ''); // private-use characters do not survive
    if (PATH_A) {
        mes = runStage('afterRegex', mes, context);
    }
    let html = escapeHtml(mes)
        .replace(/"(.+?)"/g, '<q>"$1"</q>')
        .replace(/\u201C(.+?)\u201D/g, '<q>\u201C$1\u201D</q>')
        .replace(/\*([^*\n]+)\*/g, '<em>$1</em>')
        .split(/\n{2,}/).map(part => `<p>${part.replaceAll('\n', '<br>')}</p>`).join('');
    if (PATH_A) {
        html = runStage('afterMarkdown', html, context);
    }
    return sanitize(html);
}

const chatElement = document.querySelector('#chat');

function messageElement(id) {
    const message = chat[id];
    const element = document.createElement('div');
    element.className = 'mes';
    element.innerHTML = '<div class="mes_block"><div class="ch_name"><span class="name_text"></span></div><div class="mes_text"></div></div>';
    element.setAttribute('mesid', String(id));
    element.setAttribute('is_user', String(message.is_user));
    element.setAttribute('is_system', String(message.is_system));
    element.setAttribute('ch_name', message.name);
    element.querySelector('.name_text').textContent = message.name;
    element.querySelector('.mes_text').innerHTML = messageFormatting(message.mes, message.name,
        message.is_system, message.is_user, id);
    return element;
}

function renderAll() {
    chatElement.replaceChildren();
    if (shownFrom > 0) {
        const more = document.createElement('div');
        more.id = 'show_more_messages';
        more.textContent = 'Show more messages';
        chatElement.append(more);
    }
    for (let id = shownFrom; id < chat.length; id++) {
        chatElement.append(messageElement(id));
    }
}

function rerender(id) {
    const element = chatElement.querySelector(`.mes[mesid="${id}"]`);
    const message = chat[id];
    element.setAttribute('is_system', String(message.is_system));
    element.querySelector('.mes_text').innerHTML = messageFormatting(message.mes, message.name,
        message.is_system, message.is_user, id);
}

function keep(id) {
    record[id] = JSON.stringify(chat[id]);
}

async function save() {
    const lines = [header, ...chat].map(value => JSON.stringify(value));
    await fetch('/api/chats/save', { method: 'POST', body: `${lines.join('\n')}\n` });
}

function prompt(upTo) {
    const messages = [{ role: 'system', content: 'You are the game master.' }];
    for (const message of chat.slice(0, upTo)) {
        if (!message.is_system) {
            messages.push({ role: message.is_user ? 'user' : 'assistant', content: message.mes });
        }
    }
    return messages;
}

const sleep = ms => new Promise(resolve => setTimeout(resolve, ms));

async function generate(kind) {
    await eventSource.emit(eventTypes.GENERATION_STARTED, kind, {}, false);
    let id;
    if (kind === 'swipe') {
        id = chat.length - 1;
    } else {
        chat.push({ name: header.character_name, is_user: false, is_system: false,
            send_date: SEND_DATE, mes: '', extra: { api: 'openai', model: 'fake-gm' },
            swipe_id: 0, swipes: [''] });
        id = chat.length - 1;
        chatElement.append(messageElement(id));
    }
    const response = await fetch('/api/generate', {
        method: 'POST', headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ messages: prompt(id) }),
    });
    const { text } = await response.json();
    const message = chat[id];
    if (kind === 'swipe') {
        message.swipes.push('');
        message.swipe_id = message.swipes.length - 1;
        message.mes = '';
    }
    const pieces = text.match(/[\s\S]{1,24}/g) || [];
    for (const [index, piece] of pieces.entries()) {
        message.mes += piece;
        message.swipes[message.swipe_id] = message.mes;
        const element = chatElement.querySelector(`.mes[mesid="${id}"] .mes_text`);
        element.innerHTML = messageFormatting(message.mes, message.name, false, false,
            PATH_A ? -1 : id);
        if (pause && index === Math.floor(pieces.length / 2)) {
            window.host.midStream = true;
            await pause;
            pause = null;
            window.host.midStream = false;
        }
        await sleep(5);
    }
    rerender(id);
    keep(id);
    await eventSource.emit(eventTypes.CHARACTER_MESSAGE_RENDERED, id);
    if (kind === 'swipe') {
        await eventSource.emit(eventTypes.MESSAGE_SWIPED, id);
    }
    await eventSource.emit(eventTypes.GENERATION_ENDED, chat.length);
    window.host.generationEnded = performance.now();
    await save();
}

window.SillyTavern = {
    getContext() {
        const context = {
            chat,
            eventSource,
            eventTypes,
            messageFormatting,
            isMobile: () => MOBILE,
            extensionSettings: window.host.extensionSettings,
            characters: [{ name: header.character_name, data: { extensions: {} } }],
            characterId: 0,
        };
        if (PATH_A) {
            context.messageFormatter = messageFormatter;
            context.updateMessageBlock = (id, message) => {
                if (message !== chat[id]) {
                    throw new Error('updateMessageBlock: not the chat\'s message');
                }
                if (chatElement.querySelector(`.mes[mesid="${id}"]`)) {
                    rerender(id);
                }
            };
        }
        return context;
    },
};

window.host = {
    extensionSettings: { regex: [] },
    midStream: false,
    generationEnded: 0,
    /** Open a chat: its header and messages, as a chat file holds them. */
    async load(chatHeader, messages) {
        header = chatHeader;
        chat.splice(0, chat.length, ...messages);
        record = chat.map(message => JSON.stringify(message));
        shownFrom = Math.max(0, chat.length - TRUNCATE);
        renderAll();
        await eventSource.emit(eventTypes.CHAT_CHANGED, 'chat.jsonl');
    },
    async send(text, { holdMidStream = false } = {}) {
        chat.push({ name: header.user_name, is_user: true, is_system: false, send_date: SEND_DATE,
            mes: text, extra: {} });
        const id = chat.length - 1;
        keep(id);
        chatElement.append(messageElement(id));
        await eventSource.emit(eventTypes.USER_MESSAGE_RENDERED, id);
        if (holdMidStream) {
            pause = new Promise(resolve => { resumeStream = resolve; });
        }
        await generate('normal');
    },
    resume() {
        resumeStream?.();
    },
    async swipe() {
        await generate('swipe');
    },
    async edit(id, text) {
        const message = chat[id];
        message.mes = text;
        if (message.swipes) {
            message.swipes[message.swipe_id] = text;
        }
        keep(id);
        rerender(id);
        await eventSource.emit(eventTypes.MESSAGE_EDITED, id);
        await eventSource.emit(eventTypes.MESSAGE_UPDATED, id);
        await save();
    },
    async remove(id) {
        chat.splice(id, 1);
        record.splice(id, 1);
        renderAll();
        await eventSource.emit(eventTypes.MESSAGE_DELETED, chat.length);
        await save();
    },
    /** /hide as 1.12.6 does it: is_system flipped, the attribute set, no event. */
    async hide(id) {
        chat[id].is_system = true;
        keep(id);
        chatElement.querySelector(`.mes[mesid="${id}"]`)?.setAttribute('is_system', 'true');
        await save();
    },
    /** "Show more messages": the earlier messages put before the shown ones, no event on
     * 1.12.6 (MORE_MESSAGES_LOADED on later versions). */
    async showMore() {
        const first = chatElement.querySelector('.mes');
        const from = Math.max(0, shownFrom - TRUNCATE);
        for (let id = from; id < shownFrom; id++) {
            chatElement.insertBefore(messageElement(id), first);
        }
        shownFrom = from;
        if (shownFrom === 0) {
            document.querySelector('#show_more_messages')?.remove();
        }
        if (PATH_A) {
            await eventSource.emit(eventTypes.MORE_MESSAGES_LOADED);
        }
    },
    /** The chat file the host would save from its own copies. */
    recordText() {
        return `${[JSON.stringify(header), ...record].join('\n')}\n`;
    },
    chatLength: () => chat.length,
};

/** SillyTavern starts its extensions, then opens the chat (CHAT_CHANGED). */
window.host.ready = (async () => {
    const { endpoint, header: chatHeader, messages } = await (await fetch('/chat.json')).json();
    document.querySelector('#custom_api_url_text').value = endpoint;
    const style = document.createElement('link');
    style.rel = 'stylesheet';
    style.href = '/scripts/extensions/third-party/gmtags/style.css';
    document.head.append(style);
    const extension = document.createElement('script');
    extension.type = 'module';
    extension.src = '/scripts/extensions/third-party/gmtags/index.js';
    const loaded = new Promise((resolve, reject) => {
        extension.onload = resolve;
        extension.onerror = reject;
    });
    document.body.append(extension);
    await loaded;
    await window.host.load(chatHeader, messages);
    document.body.dataset.ready = '1';
})();

// The web inbox (UI-1..9). Plain JavaScript, no build step, no other
// origin. Everything agent-written is set with textContent, never as
// markup (UI-1). Requirement ids name the rule each part enforces.
'use strict';

(() => {
  /** UI-7: VAL-5's limit in code points, as the server wrote it in. */
  const LIMIT = Number(document.querySelector('meta[name="clarion-text-limit"]').content);
  const PAGE_SIZE = 50;
  const CATCH_UP_SIZE = 200;

  const $ = (id) => document.getElementById(id);
  const meta = document.querySelector('meta[name="clarion-api"]');
  // UI-5: the API may live on another origin of the same site.
  const apiBase = meta && meta.content ? meta.content.replace(/\/$/, '') + '/' : document.baseURI;
  const apiUrl = (path) => new URL(path, apiBase).toString();

  const state = {
    principal: null,
    via: null,
    /** Loaded pending bundles, LIST-3 order; each with `receivedAt`. */
    bundles: [],
    nextCursor: null,
    filter: '',
    current: 0,
    /** The bundle in the answer view: {bundle, done, sending, question}. */
    open: null,
    /** Bundles settled or closed since sign-in (id → {type, data} of
     *  the event, or null): never pending again. */
    settled: new Map(),
    drafts: new Map(),
    stream: null,
    retry: 0,
    listGeneration: 0,
    /** Changes at each open, sign-in and sign-out: late replies compare. */
    openGeneration: 0,
    catchUp: null,
    /** The earliest `created_at` of asked events not yet fetched. */
    askedSince: null,
  };

  /** Forgets everything of the previous principal (UI-2): nothing of
   *  theirs (bundles, drafts, filter) may show to the next one. */
  function forget() {
    state.principal = null;
    state.via = null;
    state.bundles = [];
    state.nextCursor = null;
    state.filter = '';
    state.current = 0;
    state.open = null;
    state.settled.clear();
    state.drafts.clear();
    state.catchUp = null;
    state.askedSince = null;
    state.listGeneration += 1;
    state.openGeneration += 1;
    clearTimeout(countTimer);
    clearTimeout(state.retry);
    $('bundles').replaceChildren();
    cards.clear();
    $('workspace').value = '';
    $('count').textContent = '';
    $('live').textContent = '';
    $('load-more').hidden = true;
    $('empty').hidden = true;
  }

  // ---------------------------------------------------------------- API

  /** Every request carries its credentials, also cross-origin (UI-5). */
  async function request(method, path, body) {
    const init = { method, credentials: 'include', cache: 'no-store', headers: {} };
    if (body !== undefined) {
      init.headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    let response;
    try {
      response = await fetch(apiUrl(path), init);
    } catch (error) {
      return { status: 0, body: { error: 'the server cannot be reached' } };
    }
    let data = {};
    try {
      data = await response.json();
    } catch (error) {
      data = {};
    }
    if (response.status === 401 && !(method === 'POST' && path === 'api/v1/session')) {
      showSignIn(state.principal ? 'Your session has ended. Sign in again.' : '');
    }
    return { status: response.status, body: data || {} };
  }

  const bundlePath = (id, tail) =>
    'api/v1/clarification/' + encodeURIComponent(id) + (tail ? '/' + tail : '');

  function listPath(params) {
    const query = new URLSearchParams();
    if (state.filter) query.set('workspace_id', state.filter);
    for (const [key, value] of Object.entries(params)) {
      if (value !== null && value !== undefined) query.set(key, String(value));
    }
    return 'api/v1/clarification?' + query.toString();
  }

  // ------------------------------------------------------------ helpers

  const codePoints = (text) => Array.from(text).length;

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function ageText(seconds) {
    const s = Math.max(0, Math.floor(seconds));
    if (s < 60) return 'just now';
    if (s < 3600) return Math.floor(s / 60) + ' min ago';
    if (s < 86400) return Math.floor(s / 3600) + ' h ago';
    return Math.floor(s / 86400) + ' d ago';
  }

  const ageOf = (bundle) => bundle.age_seconds + (performance.now() - bundle.receivedAt) / 1000;

  function principalText(principal) {
    if (!principal) return '';
    switch (principal.kind) {
      case 'user': return 'user:' + principal.user_id;
      case 'agent': return 'agent:' + principal.user_id + '/' + principal.agent_id;
      default: return principal.kind;
    }
  }

  const mayCancel = () => state.principal && ['user', 'system'].includes(state.principal.kind);

  let toastTimer = 0;
  function toast(text) {
    $('toast').textContent = text;
    clearTimeout(toastTimer);
    toastTimer = setTimeout(() => { $('toast').textContent = ''; }, 5000);
  }

  function show(section) {
    for (const id of ['loading', 'sign-in', 'inbox', 'answer']) $(id).hidden = id !== section;
  }

  const isTextField = (node) =>
    node instanceof HTMLTextAreaElement ||
    (node instanceof HTMLInputElement && !['checkbox', 'radio', 'button', 'submit'].includes(node.type)) ||
    (node instanceof HTMLElement && node.isContentEditable);

  // ------------------------------------------------------------ sign-in (UI-2)

  function showSignIn(message) {
    closeStream();
    forget();
    $('who').textContent = '';
    $('sign-out').hidden = true;
    $('sign-in-error').textContent = message || '';
    document.title = 'clarion inbox';
    show('sign-in');
    $('token').focus();
  }

  async function signIn(event) {
    event.preventDefault();
    const token = $('token').value.trim();
    if (!token) {
      $('sign-in-error').textContent = 'Paste an API token.';
      return;
    }
    const reply = await request('POST', 'api/v1/session', { token });
    if (reply.status === 200) {
      $('token').value = '';
      await start();
    } else if (reply.status === 401) {
      $('sign-in-error').textContent = 'That token is unknown or revoked.';
    } else if (reply.status === 403) {
      $('sign-in-error').textContent = 'The server does not accept sign-ins from this page\u2019s origin (see --allow-origin).';
    } else {
      $('sign-in-error').textContent = 'Sign-in failed: ' + (reply.body.error || 'status ' + reply.status);
    }
  }

  async function signOut() {
    await request('DELETE', 'api/v1/session');
    showSignIn('Signed out.');
  }

  async function start() {
    const me = await request('GET', 'api/v1/session');
    if (me.status === 401) return; // request() showed the sign-in
    if (me.status !== 200) {
      $('loading').textContent = 'The inbox is unavailable: ' + (me.body.error || 'status ' + me.status);
      show('loading');
      return;
    }
    state.principal = me.body.principal;
    state.via = me.body.via;
    $('who').textContent = principalText(state.principal);
    $('sign-out').hidden = state.via !== 'session';
    $('cancel-bundle').hidden = !mayCancel();
    show('inbox');
    $('inbox-heading').focus();
    // The list loads now and again whenever the stream (re)opens, so it
    // shows even where the stream cannot open, and misses nothing asked
    // before the stream's start.
    reloadList();
    openStream();
  }

  // ------------------------------------------------------------ live (UI-3, UI-6)

  function closeStream() {
    if (state.stream) state.stream.close();
    state.stream = null;
  }

  /** The list loads once the stream is open, so nothing asked in between
   *  is missed (the stream starts at the log's head when it opens). */
  function openStream() {
    closeStream();
    const stream = new EventSource(apiUrl('api/v1/events'), { withCredentials: true });
    state.stream = stream;
    stream.onopen = () => {
      $('live').textContent = 'Live';
      reloadList();
    };
    stream.onerror = () => {
      if (state.stream !== stream) return;
      if (stream.readyState === EventSource.CLOSED) {
        // Refused: signed out (request() then shows the sign-in), or the
        // server or a proxy failing; try again, less often each time.
        $('live').textContent = 'Not live. Retrying…';
        state.stream = null;
        retryStream(2000);
      } else {
        $('live').textContent = 'Reconnecting…';
      }
    };
    for (const type of ['bundle.asked', 'bundle.resolved', 'bundle.closed']) {
      stream.addEventListener(type, (message) => onEvent(type, message.data));
    }
    stream.addEventListener('reset', () => reloadList());
  }

  function retryStream(delay) {
    clearTimeout(state.retry);
    state.retry = setTimeout(async () => {
      if (state.stream || !state.principal) return;
      const me = await request('GET', 'api/v1/session');
      if (me.status === 200 && state.principal) openStream();
      else if (me.status !== 401 && state.principal) retryStream(Math.min(delay * 2, 30000));
    }, delay);
  }

  function onEvent(type, text) {
    let event;
    try {
      event = JSON.parse(text);
    } catch (error) {
      return;
    }
    if (!event || typeof event.pending_id !== 'string') return;
    const id = event.pending_id;
    const data = event.data && typeof event.data === 'object' ? event.data : {};
    if (type === 'bundle.asked') {
      if (state.settled.has(id)) return;
      if (typeof data.created_at === 'string' && (!state.askedSince || data.created_at < state.askedSince)) {
        state.askedSince = data.created_at;
      }
      catchUp();
    } else {
      const shown = state.bundles.some((bundle) => bundle.pending_id === id);
      state.settled.set(id, { type, data });
      removeBundle(id);
      const open = state.open;
      // A bundle settled elsewhere while open shows the winner (UI-6);
      // this page's own submission is answered by its reply instead.
      if (open && open.bundle.pending_id === id && !open.done && !open.sending) {
        showSettledBy(type, data, 'It was settled elsewhere while you had it open.');
      } else if (shown) {
        announce('A request was settled elsewhere and left the inbox.');
      }
    }
    refreshCount();
  }

  /** The settled view for a `bundle.resolved` or `bundle.closed` event. */
  function showSettledBy(type, data, note) {
    if (type === 'bundle.resolved') showSettled(data.status, data.response, note);
    else showClosed('It is no longer active (' + (data.reason || 'closed') + ').');
  }

  function announce(text) {
    $('announce').textContent = text;
  }

  /** New bundles: fetch those created since the earliest asked event
   *  not yet fetched (the listing applies the filter and visibility).
   *  With pages still unloaded, only those inside the loaded part are
   *  added; "Load more" brings the rest in order. */
  function catchUp() {
    if (state.catchUp || !state.askedSince) return;
    const since = state.askedSince;
    state.askedSince = null;
    const run = {};
    state.catchUp = run;
    const generation = state.listGeneration;
    request('GET', listPath({ created_since: since, limit: CATCH_UP_SIZE })).then((reply) => {
      if (state.catchUp === run) state.catchUp = null;
      if (generation !== state.listGeneration) return;
      if (reply.status !== 200 || !Array.isArray(reply.body.bundles)) {
        if (reply.status !== 401) reloadList();
        return;
      }
      if (reply.body.next_cursor) {
        reloadList();
        return;
      }
      const last = state.bundles[state.bundles.length - 1];
      const fresh = reply.body.bundles.filter((bundle) =>
        !state.nextCursor || (last && order(bundle, last) <= 0));
      const before = state.bundles.length;
      addBundles(fresh);
      renderList();
      const added = state.bundles.length - before;
      if (added > 0) announce(added === 1 ? 'A new request arrived.' : added + ' new requests arrived.');
      catchUp();
    });
  }

  let countTimer = 0;
  function refreshCount() {
    clearTimeout(countTimer);
    countTimer = setTimeout(async () => {
      const reply = await request('GET', 'api/v1/summary');
      if (reply.status !== 200 || !Number.isInteger(reply.body.pending_bundles)) return;
      const waiting = reply.body.pending_bundles;
      document.title = waiting ? '(' + waiting + ') clarion inbox' : 'clarion inbox';
      $('count').textContent = '(' + waiting + ')';
    }, 150);
  }

  // ------------------------------------------------------------ the inbox (UI-3)

  async function reloadList() {
    const generation = ++state.listGeneration;
    state.catchUp = null;
    const reply = await request('GET', listPath({ limit: PAGE_SIZE }));
    if (generation !== state.listGeneration) return;
    if (reply.status !== 200 || !Array.isArray(reply.body.bundles)) {
      if (reply.status !== 401) {
        $('live').textContent = 'Could not load the inbox: ' + (reply.body.error || 'status ' + reply.status);
      }
      return;
    }
    state.bundles = [];
    addBundles(reply.body.bundles);
    state.nextCursor = typeof reply.body.next_cursor === 'string' ? reply.body.next_cursor : null;
    state.current = Math.min(state.current, Math.max(0, state.bundles.length - 1));
    renderList();
    refreshCount();
    // Asked events that came while this list was read may be newer.
    catchUp();
  }

  async function loadMore() {
    if (!state.nextCursor) return;
    const generation = state.listGeneration;
    const reply = await request('GET', listPath({ limit: PAGE_SIZE, cursor: state.nextCursor }));
    if (generation !== state.listGeneration) return;
    if (reply.status !== 200 || !Array.isArray(reply.body.bundles)) {
      if (reply.status !== 401) toast('Could not load more: ' + (reply.body.error || 'status ' + reply.status));
      return;
    }
    addBundles(reply.body.bundles);
    state.nextCursor = typeof reply.body.next_cursor === 'string' ? reply.body.next_cursor : null;
    renderList();
  }

  /** LIST-3: oldest first, ties by id (the timestamps sort as text). */
  function order(a, b) {
    if (a.created_at !== b.created_at) return a.created_at < b.created_at ? -1 : 1;
    if (a.pending_id !== b.pending_id) return a.pending_id < b.pending_id ? -1 : 1;
    return 0;
  }

  function addBundles(bundles) {
    const now = performance.now();
    const shown = new Set(state.bundles.map((bundle) => bundle.pending_id));
    for (const bundle of bundles) {
      const wellFormed = bundle && typeof bundle.pending_id === 'string' &&
        typeof bundle.created_at === 'string' && Array.isArray(bundle.questions);
      if (!wellFormed || shown.has(bundle.pending_id) || state.settled.has(bundle.pending_id)) continue;
      bundle.receivedAt = now;
      state.bundles.push(bundle);
    }
    state.bundles.sort(order);
  }

  function removeBundle(id) {
    const index = state.bundles.findIndex((bundle) => bundle.pending_id === id);
    if (index < 0) return;
    const hadFocus = document.activeElement && document.activeElement.dataset &&
      document.activeElement.dataset.id === id;
    state.bundles.splice(index, 1);
    if (state.current > index) state.current -= 1;
    renderList();
    if (hadFocus) focusCurrent();
  }

  /** Focus on the list's current bundle, or on the heading when none. */
  function focusInbox() {
    if (state.bundles.length) focusCurrent();
    else $('inbox-heading').focus();
  }

  /** One card per bundle, kept across renders (keyed by id): a card
   *  someone points at or has focused is never swapped for a copy. */
  const cards = new Map();

  function indexOf(id) {
    return state.bundles.findIndex((bundle) => bundle.pending_id === id);
  }

  function card(bundle) {
    const known = cards.get(bundle.pending_id);
    if (known) return known;
    const item = el('li');
    const button = el('button', 'bundle');
    button.type = 'button';
    button.dataset.id = bundle.pending_id;
    const line = el('span', 'line');
    line.append(el('span', 'age', ''));
    if (bundle.kind === 'permission') line.append(el('span', 'chip permission', 'permission'));
    line.append(el('span', 'task', 'task ' + bundle.task_id));
    const questions = bundle.questions.length;
    line.append(el('span', '', questions + (questions === 1 ? ' question' : ' questions')));
    button.append(line);
    if (bundle.context) button.append(el('span', 'context', bundle.context));
    const titles = el('span', 'titles');
    for (const question of bundle.questions) {
      titles.append(el('span', 'title', question.title || question.prompt));
    }
    button.append(titles);
    button.addEventListener('click', () => {
      const index = indexOf(bundle.pending_id);
      if (index >= 0) state.current = index;
      openBundle(bundle.pending_id);
    });
    button.addEventListener('focus', () => {
      const index = indexOf(bundle.pending_id);
      if (index >= 0) setCurrent(index, false);
    });
    item.append(button);
    cards.set(bundle.pending_id, item);
    return item;
  }

  function renderList() {
    const list = $('bundles');
    const focused = document.activeElement;
    state.current = Math.min(state.current, Math.max(0, state.bundles.length - 1));
    const items = state.bundles.map(card);
    const shown = new Set(state.bundles.map((bundle) => bundle.pending_id));
    for (const id of cards.keys()) if (!shown.has(id)) cards.delete(id);
    const unchanged = items.length === list.children.length &&
      items.every((item, index) => list.children[index] === item);
    if (!unchanged) list.replaceChildren(...items);
    if (focused && focused !== document.activeElement && list.contains(focused)) focused.focus();
    items.forEach((item, index) => {
      const button = item.firstChild;
      button.classList.toggle('current', index === state.current);
      button.tabIndex = index === state.current ? 0 : -1;
      button.querySelector('.age').textContent = ageText(ageOf(state.bundles[index]));
    });
    $('empty').hidden = state.bundles.length > 0;
    $('empty').textContent = state.filter
      ? 'Nothing is waiting for you in workspace \u201c' + state.filter + '\u201d.'
      : 'Nothing is waiting for you.';
    $('load-more').hidden = !state.nextCursor;
  }

  function setCurrent(index, focus) {
    if (!state.bundles.length) return;
    state.current = Math.max(0, Math.min(index, state.bundles.length - 1));
    const buttons = $('bundles').querySelectorAll('button.bundle');
    buttons.forEach((button, i) => {
      button.classList.toggle('current', i === state.current);
      button.tabIndex = i === state.current ? 0 : -1;
    });
    if (focus) focusCurrent();
  }

  function focusCurrent() {
    const button = $('bundles').querySelectorAll('button.bundle')[state.current];
    if (button) {
      button.focus();
      button.scrollIntoView({ block: 'nearest' });
    } else if (!$('inbox').hidden) {
      $('inbox-heading').focus();
    }
  }

  function refreshAges() {
    if (!$('inbox').hidden) renderList();
  }

  // ------------------------------------------------------------ answering (UI-4)

  async function openBundle(id) {
    if (state.open) return;
    const generation = ++state.openGeneration;
    const reply = await request('GET', bundlePath(id));
    // Signed out, or another open began, while this one was read.
    if (generation !== state.openGeneration || state.open || !state.principal) return;
    if (reply.status === 404) {
      state.settled.set(id, null);
      removeBundle(id);
      toast('That request is gone, or you can no longer see it.');
      return;
    }
    const bundle = reply.body;
    if (reply.status !== 200 || typeof bundle.pending_id !== 'string' || !Array.isArray(bundle.questions)) {
      if (reply.status !== 401) toast('Could not open it: ' + (reply.body.error || 'status ' + reply.status));
      return;
    }
    state.open = { bundle, done: false, sending: false, question: 0 };
    renderAnswer(bundle);
    show('answer');
    window.scrollTo(0, 0);
    $('answer').focus({ preventScroll: true });
    // An event may have settled it while it was read (UI-6).
    const settledBy = state.settled.get(id);
    if (settledBy) {
      showSettledBy(settledBy.type, settledBy.data, 'It was settled elsewhere just as you opened it.');
    } else if (bundle.status !== 'pending') {
      if (bundle.response) {
        showSettled(bundle.status, bundle.response, 'It was settled before you opened it.');
      } else {
        showClosed('It is no longer active (' + bundle.status + ').');
      }
    }
  }

  function renderAnswer(bundle) {
    const first = bundle.questions[0];
    $('answer-heading').textContent = bundle.questions.length === 1 && first
      ? first.title || 'Answer' : 'Answer ' + bundle.questions.length + ' questions';
    const meta = $('answer-meta');
    meta.replaceChildren(
      el('span', '', 'asked ' + ageText(bundle.age_seconds)),
      el('span', '', 'task ' + bundle.task_id),
      el('span', '', 'session ' + bundle.session_id));
    if (bundle.kind === 'permission') meta.prepend(el('span', 'chip permission', 'permission'));
    $('answer-context').textContent = bundle.context;
    $('answer-context').hidden = !bundle.context;
    const draft = state.drafts.get(bundle.pending_id);
    const questions = $('questions');
    questions.replaceChildren();
    bundle.questions.forEach((question, qIndex) => {
      const fieldset = el('fieldset', 'question');
      fieldset.dataset.index = String(qIndex);
      fieldset.append(el('legend', '', question.title || 'Question ' + (qIndex + 1)));
      if (question.prompt) fieldset.append(el('p', 'prompt', question.prompt));
      question.options.forEach((option, oIndex) => {
        const label = el('label', 'option');
        const box = document.createElement('input');
        box.type = 'checkbox';
        box.value = option.option_id;
        box.checked = Boolean(draft && draft.selected[qIndex] && draft.selected[qIndex].includes(option.option_id));
        const n = el('span', 'n', oIndex < 9 ? String(oIndex + 1) : '');
        n.setAttribute('aria-hidden', 'true');
        const text = el('span', 'text');
        text.append(el('span', 'label', option.label));
        if (option.description) text.append(el('span', 'description', option.description));
        label.append(box, n, text);
        fieldset.append(label);
      });
      const textId = 'text-' + qIndex;
      const textLabel = el('label', '', question.options.length ? 'Something else (optional)' : 'Your answer');
      textLabel.htmlFor = textId;
      const area = document.createElement('textarea');
      area.id = textId;
      area.rows = 2;
      area.className = 'custom-text';
      area.value = draft ? draft.texts[qIndex] || '' : '';
      const counter = el('p', 'counter');
      const count = el('span', '', '');
      count.id = textId + '-count';
      const limit = el('span', 'error', '');
      limit.id = textId + '-limit';
      limit.setAttribute('role', 'alert');
      counter.append(count, limit);
      area.setAttribute('aria-describedby', count.id + ' ' + limit.id);
      fieldset.append(textLabel, area, counter);
      limitText(area, count, limit);
      fieldset.addEventListener('focusin', () => setQuestion(qIndex, false));
      questions.append(fieldset);
    });
    $('reject-reason').value = draft ? draft.reason : '';
    $('reject-reason').dispatchEvent(new Event('input'));
    $('reject').hidden = !(draft && draft.rejecting);
    $('answer-error').textContent = '';
    $('answer-form').hidden = false;
    $('settled').hidden = true;
    setSending(false);
    resetCancel();
    setQuestion(0, false);
  }

  function setQuestion(index, focus) {
    const fieldsets = $('questions').querySelectorAll('fieldset.question');
    if (!fieldsets.length || !state.open) return;
    const next = Math.max(0, Math.min(index, fieldsets.length - 1));
    state.open.question = next;
    fieldsets.forEach((fieldset, i) => fieldset.classList.toggle('current', i === next));
    if (focus) {
      const target = fieldsets[next].querySelector('input, textarea');
      if (target) target.focus();
      fieldsets[next].scrollIntoView({ block: 'nearest' });
    }
  }

  /** UI-7: at most LIMIT code points, counted on the value; an input
   *  that would pass it is refused whole, with a message, never cut. */
  function limitText(area, count, message) {
    let accepted = area.value;
    const update = () => {
      const n = codePoints(area.value);
      count.textContent = n + ' / ' + LIMIT;
      if (n === LIMIT && !message.dataset.refused) {
        message.textContent = 'That is the limit: ' + LIMIT + ' characters.';
      } else if (n < LIMIT) {
        message.textContent = '';
      }
      delete message.dataset.refused;
    };
    const refuse = (wouldBe) => {
      message.dataset.refused = '1';
      message.textContent = 'At most ' + LIMIT + ' characters: that input was not added (it would make ' + wouldBe + ').';
    };
    area.addEventListener('beforeinput', (event) => {
      if (event.isComposing || !event.inputType.startsWith('insert')) return;
      let data = event.data;
      if (data === null && event.dataTransfer) data = event.dataTransfer.getData('text/plain');
      if (data === null) return; // the input event below still checks
      const value = area.value;
      const kept = codePoints(value.slice(0, area.selectionStart)) + codePoints(value.slice(area.selectionEnd));
      const wouldBe = kept + codePoints(data);
      if (wouldBe > LIMIT) {
        event.preventDefault();
        refuse(wouldBe);
        count.textContent = codePoints(value) + ' / ' + LIMIT;
      }
    });
    const check = (event) => {
      if (event && event.isComposing) return;
      const n = codePoints(area.value);
      if (n > LIMIT) {
        const caret = Math.max(0, area.selectionStart - (area.value.length - accepted.length));
        area.value = accepted;
        area.setSelectionRange(caret, caret);
        refuse(n);
        count.textContent = codePoints(area.value) + ' / ' + LIMIT;
        return;
      }
      accepted = area.value;
      update();
    };
    area.addEventListener('input', check);
    area.addEventListener('compositionend', () => check());
    update();
  }

  function collectAnswers() {
    const fieldsets = $('questions').querySelectorAll('fieldset.question');
    return state.open.bundle.questions.map((question, index) => {
      const fieldset = fieldsets[index];
      const selected = Array.from(fieldset.querySelectorAll('input[type=checkbox]:checked'))
        .map((box) => box.value);
      return {
        question_id: question.question_id,
        selected_options: selected,
        custom_text: fieldset.querySelector('textarea').value,
      };
    });
  }

  function saveDraft() {
    const open = state.open;
    if (!open || open.done) return;
    const answers = collectAnswers();
    state.drafts.set(open.bundle.pending_id, {
      selected: answers.map((answer) => answer.selected_options),
      texts: answers.map((answer) => answer.custom_text),
      reason: $('reject-reason').value,
      rejecting: !$('reject').hidden,
    });
  }

  function setSending(sending) {
    for (const id of ['submit', 'reject-open', 'reject-send', 'cancel-bundle']) $(id).disabled = sending;
    if (state.open) state.open.sending = sending;
  }

  async function submitAnswer() {
    if (!state.open || state.open.done || state.open.sending) return;
    await settle('respond', { answers: collectAnswers() });
  }

  async function submitReject() {
    if (!state.open || state.open.done || state.open.sending) return;
    await settle('respond', { rejected: true, reject_reason: $('reject-reason').value });
  }

  let cancelArmed = 0;
  function resetCancel() {
    clearTimeout(cancelArmed);
    cancelArmed = 0;
    $('cancel-bundle').textContent = 'Cancel request';
  }

  async function cancelBundle() {
    if (!state.open || state.open.done || state.open.sending) return;
    if (!cancelArmed) {
      // Two steps: cancelling ends the agent's wait for good.
      $('cancel-bundle').textContent = 'Click again to cancel it';
      toast('Cancelling ends the agent\u2019s wait for good: click Cancel again within 5 seconds.');
      cancelArmed = setTimeout(resetCancel, 5000);
      return;
    }
    resetCancel();
    await settle('cancel', {});
  }

  /** UI-6: the reply decides. `claimed: true` is ours; `claimed: false`
   *  shows the winner's status and answers (never ours); 409 closes. */
  async function settle(action, body) {
    const open = state.open;
    const id = open.bundle.pending_id;
    const focused = document.activeElement;
    $('answer-error').textContent = '';
    setSending(true);
    const reply = await request('POST', bundlePath(id, action), body);
    open.sending = false;
    // Closed (Escape) while it was sent: the outcome still reaches the
    // person, as a toast, and the list still follows it.
    const here = state.open === open;
    if (here) setSending(false);
    const claimed = reply.status === 200 ? reply.body.claimed : undefined;
    const lostNote = 'Someone else settled it first; what you sent was not recorded.';
    if (claimed === true) {
      finish(id);
      const sent = reply.body.status === 'answered' ? 'Answer sent.' : 'Request ' + reply.body.status + '.';
      if (here) closeAnswer();
      toast(sent);
    } else if (claimed === false) {
      finish(id);
      if (here) showSettled(reply.body.status, reply.body.response, lostNote);
      else toast(lostNote + ' Open requests show who won.');
    } else if (reply.status === 409 || reply.status === 404) {
      finish(id);
      const note = reply.status === 409
        ? 'It is no longer active; nobody answered it.'
        : 'It no longer exists, or you can no longer see it.';
      if (here) showClosed(note);
      else toast(note);
    } else if (reply.status !== 401) {
      const error = reply.status === 200
        ? 'The server sent an unexpected reply; nothing is known to be recorded.'
        : reply.body.error || 'The server answered ' + reply.status + '.';
      if (here) {
        $('answer-error').textContent = error;
        if (focused instanceof HTMLElement && document.activeElement === document.body) focused.focus();
      } else {
        toast(error);
      }
    }
  }

  function finish(id) {
    if (!state.settled.has(id)) state.settled.set(id, null);
    state.drafts.delete(id);
    removeBundle(id);
    refreshCount();
  }

  const OUTCOME = {
    answered: 'Already answered',
    rejected: 'Already rejected',
    cancelled: 'Already cancelled',
  };

  function showSettled(status, response, note) {
    const open = state.open;
    open.done = true;
    $('answer-form').hidden = true;
    $('settled-heading').textContent = OUTCOME[status] || 'Settled: ' + status;
    $('settled-note').textContent = note;
    const list = $('settled-answers');
    list.replaceChildren();
    const answers = response && Array.isArray(response.answers) ? response.answers : [];
    if (status === 'rejected' && response) {
      list.append(el('dt', '', 'Reason'), el('dd', '', response.reject_reason || '(none given)'));
    } else {
      for (const answer of answers) {
        if (!answer || !Array.isArray(answer.selected_options)) continue;
        const question = open.bundle.questions.find((q) => q.question_id === answer.question_id);
        list.append(el('dt', '', question ? question.title || question.prompt : answer.question_id));
        const labels = answer.selected_options.map((optionId) => {
          const option = question && question.options.find((o) => o.option_id === optionId);
          return option ? option.label : optionId;
        });
        const parts = [];
        if (labels.length) parts.push(labels.join(', '));
        if (answer.custom_text) parts.push(answer.custom_text);
        const dd = el('dd', 'winner-answer', parts.length ? parts.join('\n') : '(no answer)');
        list.append(dd);
      }
    }
    $('settled').hidden = false;
    $('settled').focus();
  }

  function showClosed(note) {
    state.open.done = true;
    $('answer-form').hidden = true;
    $('settled-heading').textContent = 'No longer active';
    $('settled-note').textContent = note;
    $('settled-answers').replaceChildren();
    $('settled').hidden = false;
    $('settled').focus();
  }

  /** Closing sends nothing: it never answers, rejects or cancels (UI-8). */
  function closeAnswer() {
    saveDraft();
    resetCancel();
    state.open = null;
    show('inbox');
    renderList();
    focusInbox();
  }

  function toggleReject() {
    const reject = $('reject');
    reject.hidden = !reject.hidden;
    if (!reject.hidden) $('reject-reason').focus();
  }

  // ------------------------------------------------------------ keyboard (UI-8)

  function onKey(event) {
    // Escape, wherever it goes: a bundle still being opened stays closed.
    if (event.key === 'Escape') state.openGeneration += 1;
    if (event.defaultPrevented || $('help').open) return;
    const answering = !$('answer').hidden;
    if (event.isComposing) return;
    if (event.key === 'Escape') {
      if (answering) {
        event.preventDefault();
        if (!$('reject').hidden && !state.open.done) {
          $('reject').hidden = true;
          $('reject-open').focus();
        } else {
          closeAnswer();
        }
      }
      return;
    }
    if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) {
      if (answering && state.open && !state.open.done) {
        event.preventDefault();
        if (!$('reject').hidden && document.activeElement === $('reject-reason')) submitReject();
        else submitAnswer();
      }
      return;
    }
    if (isTextField(event.target) || event.altKey || event.ctrlKey || event.metaKey) return;
    if (event.key === '?') {
      event.preventDefault();
      openHelp();
      return;
    }
    if (answering) answerKey(event);
    else if (!$('inbox').hidden) listKey(event);
  }

  function listKey(event) {
    const active = document.activeElement;
    const onBundle = active && active.classList.contains('bundle');
    // Enter opens the current bundle only where it means nothing else
    // (on a button or link it is that control's own).
    const nowhere = !active || active === document.body || active === $('inbox-heading');
    switch (event.key) {
      case 'j':
      case 'ArrowDown':
        event.preventDefault();
        setCurrent(onBundle ? state.current + 1 : state.current, true);
        break;
      case 'k':
      case 'ArrowUp':
        event.preventDefault();
        setCurrent(onBundle ? state.current - 1 : state.current, true);
        break;
      case 'Enter':
        if (nowhere && state.bundles[state.current]) {
          event.preventDefault();
          openBundle(state.bundles[state.current].pending_id);
        }
        break;
      default:
    }
  }

  function answerKey(event) {
    if (!state.open || state.open.done) return;
    if (/^[1-9]$/.test(event.key)) {
      const fieldset = $('questions').querySelectorAll('fieldset.question')[state.open.question];
      const box = fieldset && fieldset.querySelectorAll('input[type=checkbox]')[Number(event.key) - 1];
      if (box) {
        event.preventDefault();
        box.checked = !box.checked;
        box.focus();
      }
      return;
    }
    // Arrows change question among the questions (elsewhere they scroll).
    const active = document.activeElement;
    const inQuestions = active === $('answer') || $('questions').contains(active);
    if (!inQuestions) return;
    if (event.key === 'ArrowDown' || event.key === 'ArrowRight') {
      event.preventDefault();
      setQuestion(state.open.question + 1, true);
    } else if (event.key === 'ArrowUp' || event.key === 'ArrowLeft') {
      event.preventDefault();
      setQuestion(state.open.question - 1, true);
    }
  }

  function openHelp() {
    if (!$('help').open) $('help').showModal();
  }

  // ------------------------------------------------------------ wiring

  function wire() {
    $('sign-in-form').addEventListener('submit', signIn);
    $('sign-out').addEventListener('click', signOut);
    $('filter-form').addEventListener('submit', (event) => {
      event.preventDefault();
      state.filter = $('workspace').value.trim();
      state.current = 0;
      reloadList();
    });
    $('load-more').addEventListener('click', loadMore);
    $('answer-form').addEventListener('submit', (event) => {
      event.preventDefault();
      submitAnswer();
    });
    $('reject-open').addEventListener('click', toggleReject);
    $('reject-send').addEventListener('click', submitReject);
    $('cancel-bundle').addEventListener('click', cancelBundle);
    $('close').addEventListener('click', closeAnswer);
    $('settled-close').addEventListener('click', closeAnswer);
    $('help-open').addEventListener('click', openHelp);
    $('help-close').addEventListener('click', () => $('help').close());
    limitText($('reject-reason'), $('reject-reason-count'), $('reject-reason-limit'));
    document.addEventListener('keydown', onKey);
    setInterval(refreshAges, 30000);
  }

  wire();
  start();
})();

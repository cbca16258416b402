/**
 * The two scripts of the passkey step (DESIGN §7.1), served from this origin so the pages' CSP can
 * stay `script-src 'self'`: @simplewebauthn/browser's UMD bundle (global SimpleWebAuthnBrowser),
 * embedded at build time as the stylesheet is (the daemon ships as one binary), and a small glue
 * script that gives every `form[data-passkey]` its passkey step without per-form code:
 *
 * 1. on submit it POSTs the same form to the same URL with `passkey_step=options`
 *    (Accept: application/json);
 * 2. the route builds the decision the form would make and answers `{passkey: false}` (the owner
 *    has no passkey, or the change needs none: the form is submitted as is) or `{passkey: true,
 *    options}` (authentication options whose challenge commits to that decision);
 * 3. the glue runs `startAuthentication({optionsJSON})`, puts the browser's answer (JSON) in a
 *    hidden `passkey` field and submits the form, which decides as before, with the assertion.
 *
 * `form[data-passkey-register]` does the same with registration options (`startRegistration`,
 * field `registration`); a form with `data-passkey-options` carries its options already (the
 * confirmation of a new passkey by an earlier one). Without JavaScript the forms post as they are
 * and a decision that needs the passkey answers a 403 page that says so.
 */
import WEBAUTHN_BUNDLE from '../../node_modules/@simplewebauthn/browser/dist/bundle/index.umd.min.js' with { type: 'text' };

/** @simplewebauthn/browser 14, minified UMD (served at /static/webauthn.js). */
export const WEBAUTHN_JS: string = WEBAUTHN_BUNDLE;

/** The glue (served at /static/passkey.js). Plain ES2017, no build step; every message is set with textContent. */
export const PASSKEY_JS = `/* Agent Wallet: the passkey step of the owner's forms (src/web/passkey-script.ts). */
(function () {
  'use strict';
  var W = window.SimpleWebAuthnBrowser;

  function statusOf(form) {
    var out = form.querySelector('.passkey-status');
    if (!out) {
      out = document.createElement('p');
      out.className = 'passkey-status';
      out.setAttribute('role', 'status');
      out.setAttribute('aria-live', 'polite');
      form.appendChild(out);
    }
    return out;
  }
  function say(form, text, bad) {
    var out = statusOf(form);
    out.textContent = text;
    out.classList.toggle('bad', Boolean(bad));
  }
  function setField(form, name, value) {
    var input = form.querySelector('input[type="hidden"][name="' + name + '"]');
    if (!input) {
      input = document.createElement('input');
      input.type = 'hidden';
      input.name = name;
      form.appendChild(input);
    }
    input.value = value;
  }
  function busy(form, on) {
    form.dataset.passkeyBusy = on ? '1' : '';
    var buttons = form.querySelectorAll('button');
    for (var i = 0; i < buttons.length; i++) buttons[i].disabled = on;
  }
  async function askOptions(form) {
    var body = new URLSearchParams(new FormData(form));
    body.delete('passkey');
    body.delete('registration');
    body.set('passkey_step', 'options');
    var res = await fetch(form.action, { method: 'POST', body: body, headers: { Accept: 'application/json' }, credentials: 'same-origin' });
    var data = null;
    try { data = await res.json(); } catch (e) { data = null; }
    if (!res.ok || !data || data.error) {
      var e = data && data.error;
      throw new Error(e ? e.message + (e.how_to_fix ? ' ' + e.how_to_fix : '') : 'The service did not answer (HTTP ' + res.status + '). Reload the page and try again.');
    }
    return data;
  }
  function finish(form, submitter) {
    form.dataset.passkeyDone = '1';
    if (typeof form.requestSubmit === 'function') form.requestSubmit(submitter && submitter.form === form ? submitter : undefined);
    else form.submit();
  }
  async function run(form, mode, submitter) {
    busy(form, true);
    try {
      var preset = form.getAttribute('data-passkey-options');
      var answer = preset ? { passkey: true, options: JSON.parse(preset) } : await askOptions(form);
      if (answer.passkey === false) return finish(form, submitter);
      if (!W || !W.browserSupportsWebAuthn()) throw new Error('This browser cannot use passkeys. Open this page in a browser that can (a current Chrome, Edge, Firefox or Safari).');
      say(form, mode === 'register' ? 'Follow your browser to create the passkey.' : 'Confirm with your passkey when your browser asks.', false);
      if (mode === 'register') setField(form, 'registration', JSON.stringify(await W.startRegistration({ optionsJSON: answer.options })));
      else setField(form, 'passkey', JSON.stringify(await W.startAuthentication({ optionsJSON: answer.options })));
      say(form, 'Passkey confirmed: sending.', false);
      finish(form, submitter);
    } catch (err) {
      busy(form, false);
      var why = err && err.name === 'NotAllowedError' ? 'the passkey prompt was cancelled, timed out, or your passkey could not verify you.' : (err && err.message) || String(err);
      say(form, 'Nothing was done: ' + why, true);
    }
  }
  document.addEventListener('submit', function (event) {
    var form = event.target;
    if (!(form instanceof HTMLFormElement)) return;
    var mode = form.hasAttribute('data-passkey-register') ? 'register' : form.hasAttribute('data-passkey') ? 'assert' : null;
    if (!mode || form.dataset.passkeyDone === '1') return;
    event.preventDefault();
    if (form.dataset.passkeyBusy === '1') return;
    run(form, mode, event.submitter);
  });
  // Back to a page from the history: each decision asks again.
  window.addEventListener('pageshow', function () {
    var forms = document.querySelectorAll('form[data-passkey], form[data-passkey-register]');
    for (var i = 0; i < forms.length; i++) {
      forms[i].dataset.passkeyDone = '';
      busy(forms[i], false);
    }
  });
})();
`;

/**
 * The web tests' browser: a cookie-keeping client over app.handle, like a browser without
 * JavaScript (the passkey glue script's JSON step is played by hand with `options`), and an owner
 * signed in through the real claim flow. Shared by the test/web page tests.
 */
import { expect } from 'bun:test';
import { listMail, type MailLink } from '../../src/db/mail.ts';
import { addWallet, type OwnerWorld } from '../actions/fixtures.ts';

/** One answer of the app, as a page test reads it. */
export interface Answer {
  status: number;
  location: string | null;
  text: string;
  headers: Headers;
}

/** A cookie-keeping client over app.handle: GET a path, or POST it a form. */
export class Browser {
  readonly jar = new Map<string, string>();
  constructor(private readonly w: OwnerWorld) {}

  /** GETs `path`, or POSTs it `form` url-encoded; `accept` sets the Accept header. Keeps the cookies set. */
  async request(path: string, form?: Record<string, string>, accept?: string): Promise<Answer> {
    const headers: Record<string, string> = {};
    if (this.jar.size) headers.cookie = [...this.jar].map(([k, v]) => `${k}=${v}`).join('; ');
    if (form) headers['content-type'] = 'application/x-www-form-urlencoded';
    if (accept) headers.accept = accept;
    const res = await this.w.app.handle(new Request(`http://localhost${path}`, { method: form ? 'POST' : 'GET', headers, body: form ? new URLSearchParams(form).toString() : undefined }));
    for (const c of res.headers.getSetCookie()) {
      const [name, value] = c.split(';')[0]!.split('=') as [string, string];
      if (value === '') this.jar.delete(name);
      else this.jar.set(name, value);
    }
    return { status: res.status, location: res.headers.get('location'), text: await res.text(), headers: res.headers };
  }

  /** The passkey glue's first step: the same form with passkey_step=options, answered as JSON. */
  async options(path: string, form: Record<string, string>): Promise<any> {
    const res = await this.request(path, { ...form, passkey_step: 'options' }, 'application/json');
    expect(res.headers.get('content-type')).toContain('application/json');
    return { status: res.status, ...JSON.parse(res.text) };
  }

  /** The value of the first hidden csrf field of a page. */
  static csrf(page: string): string {
    return /name="csrf" value="([^"]+)"/.exec(page)![1]!;
  }
}

/** The link of the newest claim mail to `email`, as a path. */
async function claimLink(w: OwnerWorld, email: string): Promise<string> {
  const mail = (await listMail(w.services.db, 100)).find((m) => m.to_addr === email && m.kind === 'claim')!;
  const links = JSON.parse(mail.links) as MailLink[];
  return new URL((links.find((l) => l.label === 'claim wallet') ?? links[0]!).url).pathname;
}

/** A new wallet named `name`, claimed by `email` through the real claim flow; returns the browser with its session. */
export async function claimedInBrowser(w: OwnerWorld, email: string, name = 'Helper Bot') {
  const wallet = await addWallet(w.services, { name });
  const b = new Browser(w);
  const page = await b.request(`/claim/${wallet.walletId}`);
  const sent = await b.request(`/claim/${wallet.walletId}`, { csrf: Browser.csrf(page.text), claim_code: wallet.code, email });
  expect(sent.status).toBe(200);
  const link = await claimLink(w, email);
  const confirm = await b.request(link);
  expect((await b.request(link, { csrf: Browser.csrf(confirm.text) })).status).toBe(303);
  return { b, wallet };
}

/** claimedInBrowser, plus the session's csrf token as the dashboard's forms carry it. */
export async function signedIn(w: OwnerWorld, email: string, name = 'Helper Bot') {
  const { b, wallet } = await claimedInBrowser(w, email, name);
  const dashboard = await b.request('/dashboard');
  return { b, wallet, csrf: Browser.csrf(dashboard.text) };
}

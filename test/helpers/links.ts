/**
 * Following a mailed one-time link as a person does: open it (the page spends nothing) and press
 * its one button (a POST of the same URL with the page's CSRF field and cookie).
 */

type Handler = (r: Request) => Promise<Response> | Response;

/** The first hidden csrf field of a page. */
export function csrfOf(page: string): string {
  const m = /name="csrf" value="([^"]+)"/.exec(page);
  if (!m) throw new Error(`no csrf field on the page: ${page.slice(0, 300)}`);
  return m[1]!;
}

/**
 * Opens `url` and presses the page's button; an answer other than the button page (404, 410) is
 * returned as it is. `handle` is `app.handle` or `fetch` (redirects are not followed).
 */
export async function followLink(handle: Handler, url: string): Promise<Response> {
  const page = await handle(new Request(url, { redirect: 'manual' }));
  if (page.status !== 200) return page;
  const setCookie = page.headers.getSetCookie().map((c) => c.split(';')[0]!);
  const form = new URLSearchParams({ csrf: csrfOf(await page.text()) });
  return handle(
    new Request(url, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...(setCookie.length ? { cookie: setCookie.join('; ') } : {}) },
      body: form.toString(),
    }),
  );
}

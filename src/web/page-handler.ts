/**
 * What every page route shares: a handler wrapper that turns the shared functions' errors into
 * pages with the same status and advice, and unknown errors into a logged 500 page.
 */
import { AppError } from '../errors.ts';
import { restoringError } from '../ops/restore-state.ts';
import type { Services } from '../services.ts';
import { problemPage, type Nav } from './html.ts';
import { FormError } from './session.ts';

export type Ctx = { request: Request; params: Record<string, string> };

const TITLES: Partial<Record<string, string>> = {
  NOT_FOUND: 'Not found',
  VALIDATION_ERROR: 'Please check the form',
  INVALID_STATUS: 'Not possible any more',
  RATE_LIMITED: 'Too many attempts',
  UNAUTHORIZED: 'Please sign in',
  SERVICE_UNAVAILABLE: 'Temporarily unavailable',
};

/** Renders an error of the shared functions as a page with the same status and advice. */
export function errorPage(err: AppError, n: Nav = {}): Response {
  if (err.details?.reason === 'passkey_required') {
    // The passkey step runs in the page's own script: without it (scripts blocked) the form posts bare and lands here.
    const how = `${err.howToFix ?? ''} The passkey prompt runs in this page's own script: if your browser blocks scripts, allow this site's (it loads no others) and press the button again. Nothing was changed.`.trim();
    return problemPage(err.status, 'Your passkey is needed', err.message, how, { ...n, passkey: false }, err.headers);
  }
  const title = TITLES[err.errorCode] ?? 'Something went wrong';
  return problemPage(err.status, title, err.message, err.howToFix, n, err.headers);
}

/** Wraps a page handler: known errors become pages, unknown ones a logged 500 page. */
export function page(services: Services, handler: (c: Ctx) => Response | Promise<Response>) {
  return async (c: Ctx): Promise<Response> => {
    try {
      // A decision or a claim while a restore is reconciled could race the chain scan: reads only.
      if (services.restore.active && c.request.method === 'POST') throw restoringError(services.restore);
      return await handler(c);
    } catch (err) {
      if (err instanceof FormError) return problemPage(err.status, 'Form not accepted', err.message, 'Go back and submit the form again.');
      if (err instanceof AppError) return errorPage(err);
      services.log.error('page failed', { path: new URL(c.request.url).pathname, error: (err as Error)?.message, stack: (err as Error)?.stack });
      return problemPage(500, 'Something went wrong', 'The page could not be shown.', 'Reload in a moment; if it persists, tell the operator the time it happened.');
    }
  };
}

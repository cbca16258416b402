/**
 * Paths on the command line are the user's: relative ones resolve against the directory the user
 * ran the command from, and the commands print them absolute. Through `npm run -s agent-wallet -- …`
 * (or `npm start`) npm runs us in the package's directory and passes the user's in INIT_CWD.
 */
import { resolve } from 'node:path';

/** The package.json scripts that run src/main.ts: only under these is INIT_CWD the user's directory (not under an outer `npm test`). */
const OUR_SCRIPTS = new Set(['agent-wallet', 'start']);

/** The directory the user ran the command from. */
export function userCwd(env: Record<string, string | undefined> = process.env, cwd: string = process.cwd()): string {
  return env.INIT_CWD && env.npm_lifecycle_event && OUR_SCRIPTS.has(env.npm_lifecycle_event) ? env.INIT_CWD : cwd;
}

/** A path the user typed, absolute (also commander's argParser for path flags). */
export function userPath(path: string): string {
  return resolve(userCwd(), path);
}

/** A file path or an http(s) URL the user typed: the path absolute, the URL as given. */
export function userPathOrUrl(value: string): string {
  return /^https?:\/\//.test(value) ? value : userPath(value);
}

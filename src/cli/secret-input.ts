/**
 * A secret the user types (a kit passphrase): from an environment variable for scripts, else read
 * from the terminal without echo, else the first line of standard input (a pipe). Never a flag:
 * a flag would land in the shell history and the process list.
 */
import { UsageError } from './usage.ts';

async function fromTerminal(prompt: string): Promise<string> {
  process.stderr.write(prompt);
  const stdin = process.stdin;
  stdin.setRawMode(true);
  stdin.resume();
  let typed = '';
  try {
    for await (const chunk of stdin) {
      for (const ch of String(chunk)) {
        if (ch === '\r' || ch === '\n') return typed;
        if (ch === '\u0003') throw new UsageError('cancelled');
        if (ch === '\u007f' || ch === '\b') typed = typed.slice(0, -1);
        else typed += ch;
      }
    }
    return typed;
  } finally {
    stdin.setRawMode(false);
    stdin.pause();
    process.stderr.write('\n');
  }
}

async function firstLine(): Promise<string> {
  let text = '';
  for await (const chunk of process.stdin) {
    text += String(chunk);
    const at = text.indexOf('\n');
    if (at >= 0) return text.slice(0, at).replace(/\r$/, '');
  }
  return text;
}

/** The secret in `envName`, or typed; `confirm` asks twice on a terminal (a new passphrase). */
export async function readSecret(envName: string, prompt: string, opts: { confirm?: boolean } = {}): Promise<string> {
  const fromEnv = process.env[envName];
  if (fromEnv) return fromEnv;
  if (!process.stdin.isTTY) {
    const line = await firstLine();
    if (!line) throw new UsageError(`no passphrase: set ${envName} or pipe it on standard input`);
    return line;
  }
  const first = await fromTerminal(prompt);
  if (opts.confirm && (await fromTerminal('Again: ')) !== first) throw new UsageError('the two passphrases differ');
  return first;
}

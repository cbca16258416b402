/**
 * Helpers for declaring commands on commander: the global agent flags, the help footer (an
 * example and the exit codes) and the parsed input a command body reads. No heavy imports here:
 * the command tree is built on every start, the bodies are imported by the command that runs.
 */
import type { CommandUnknownOpts } from '@commander-js/extra-typings';
import type { CommandInput, FlagValue } from './context.ts';
import { userPath } from './paths.ts';

export const EXIT_CODES = {
  ok: '0 ok',
  error: '1 error',
  usage: '2 bad usage',
  auth: '4 not authenticated',
  approval: '5 waiting for the owner\'s approval',
} as const;

type Exit = keyof typeof EXIT_CODES;

/** The exit codes of an agent command that talks to the daemon. */
export const AGENT_EXITS: Exit[] = ['ok', 'error', 'usage', 'auth'];

/** Adds "Example:" and "Exit codes:" under the command's help. */
export function helpFooter<C extends CommandUnknownOpts>(cmd: C, examples: string[], exits: Exit[]): C {
  const lines = examples.map((e) => `  $ ${e}`).join('\n');
  return cmd.addHelpText('after', `\nExample${examples.length > 1 ? 's' : ''}:\n${lines}\n\nExit codes: ${exits.map((e) => EXIT_CODES[e]).join(', ')}.\n`);
}

/** The global flags' long names (see withGlobals). */
export const GLOBAL_FLAGS = ['server', 'profile', 'json', 'home'] as const;

/**
 * The global flags of agent, merchant and owner commands (DESIGN §11); every such command takes
 * them after its name, and the program takes them before the command (src/cli/program.ts).
 */
export function withGlobals<C extends CommandUnknownOpts>(cmd: C) {
  return cmd
    .option('--server <url>', 'daemon API URL ending in /v1 (env AGENT_WALLET_URL; default: the profile\'s, else http://127.0.0.1:8787/v1)')
    .option('--profile <name>', 'profile name (env AGENT_WALLET_PROFILE; default "default")')
    .option('--json', 'print the API data object, or the error envelope, as JSON on stdout')
    .option('--home <dir>', 'profile directory (env AGENT_WALLET_HOME; default ~/.agent-wallet)', userPath);
}

/** Collects a repeatable flag (`--item A --item B`) into a list. */
export function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

/**
 * The long flag names a body may read: one body serves a command family (`withdraw` and
 * `withdraw confirm`; `request create` and `request list`), so the family's group and all it holds.
 */
function familyFlags(cmd: CommandUnknownOpts): Set<string> {
  const names = new Set<string>();
  const add = (c: CommandUnknownOpts, deep: boolean) => {
    for (const o of c.options) if (o.long) names.add(o.long.slice(2));
    if (deep) for (const sub of c.commands) add(sub as CommandUnknownOpts, true);
  };
  for (let c = cmd.parent; c; c = c.parent) add(c, false);
  add(cmd.parent?.parent ? cmd.parent : cmd, true);
  return names;
}

/**
 * What commander parsed for `cmd`, as the body reads it: operands (after `prefix`, the words a
 * body that serves several subcommands dispatches on) and the given flags of the command and its
 * parents, keyed by long name. A negated flag (`--no-confirm`) is `true` when given.
 */
export function inputOf(cmd: CommandUnknownOpts, prefix: string[] = []): CommandInput {
  const flags: Record<string, FlagValue> = {};
  for (let c: CommandUnknownOpts | null = cmd; c; c = c.parent) {
    for (const option of c.options) {
      if (!option.long) continue;
      const name = option.long.slice(2);
      const attribute = option.attributeName();
      if (flags[name] !== undefined || c.getOptionValueSource(attribute) !== 'cli') continue;
      flags[name] = option.negate ? true : (c.getOptionValue(attribute) as FlagValue);
    }
  }
  return { args: [...prefix, ...cmd.args], flags, declared: familyFlags(cmd) };
}

/**
 * `program` as the registrations see it when only `wants` commands can run: any other top-level
 * command is declared by name and summary only (all the overview and "did you mean" read) and the
 * rest of its declaration goes to a sink, so a start builds one command's tree, not all ~80 (~10 ms).
 */
export function onlyTree<C extends CommandUnknownOpts>(program: C, wants: (name: string) => boolean): C {
  // Any property of the sink, and any call of one, is the sink again.
  const sink: object = new Proxy(() => sink, { get: () => sink });
  const command = (nameAndArgs: string) => {
    const declared = program.command(nameAndArgs);
    if (wants(declared.name())) return declared;
    return new Proxy(sink, {
      get: (_, property) =>
        property === 'description'
          ? (summary: string) => {
              declared.description(summary);
              return sink;
            }
          : sink,
    });
  };
  return new Proxy(program, { get: (target, property, receiver) => (property === 'command' ? command : Reflect.get(target, property, receiver)) });
}

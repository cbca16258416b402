/**
 * The command line on commander: help everywhere (stdout, exit 0, with an example and the exit
 * codes), "did you mean" on typos (exit 2), completion scripts, --version. Through the real
 * entry (src/main.ts in a child process) as a user types it, and over the whole tree in process.
 */
import { describe, expect, test } from 'bun:test';
import type { CommandUnknownOpts } from '@commander-js/extra-typings';
import { buildProgram } from '../../src/cli/program.ts';
import { VERSION } from '../../src/version.ts';
import { runCli } from '../helpers/daemon.ts';
import { tempDir } from '../helpers/services.ts';

function everyCommand(cmd: CommandUnknownOpts, path: string[] = []): { path: string[]; cmd: CommandUnknownOpts }[] {
  return cmd.commands.filter((c) => c.name() !== 'help').flatMap((c) => [{ path: [...path, c.name()], cmd: c as CommandUnknownOpts }, ...everyCommand(c as CommandUnknownOpts, [...path, c.name()])]);
}

describe('help', () => {
  test('pay --help, serve --help and help withdraw print that usage on stdout, exit 0', async () => {
    const pay = await runCli(['pay', '--help']);
    expect(pay.code).toBe(0);
    expect(pay.stdout).toStartWith('Usage: agent-wallet pay [options] [to] [amount]');
    expect(pay.stdout).toContain('--idempotency-key <key>');
    expect(pay.stdout).toContain('$ agent-wallet pay alice 5');
    expect(pay.stdout).toContain('5 waiting for the owner');
    expect(pay.stderr).toBe('');

    const serve = await runCli(['serve', '--help']);
    expect(serve.code).toBe(0);
    expect(serve.stdout).toStartWith('Usage: agent-wallet serve [options]');
    for (const flag of ['--config <file>', '--data-dir <dir>', '--port <n>', '--host <host>']) expect(serve.stdout).toContain(flag);

    const withdraw = await runCli(['help', 'withdraw']);
    expect(withdraw.code).toBe(0);
    expect(withdraw.stdout).toStartWith('Usage: agent-wallet withdraw');
    expect(withdraw.stdout).toContain('confirm [options] <withdrawalId>');
    expect(withdraw.stdout).toContain('Exit codes: 0 ok, 1 error, 2 bad usage');
  });

  test('nested: admin catalog add --help and merchant request create --help', async () => {
    const add = await runCli(['admin', 'catalog', 'add', '--help']);
    expect(add.code).toBe(0);
    expect(add.stdout).toContain('--name <name>');
    const create = await runCli(['merchant', 'request', 'create', '--help']);
    expect(create.code).toBe(0);
    expect(create.stdout).toContain('--item <desc:price[:qty]>');
  });

  test('every command and subcommand has a summary, an example and its exit codes in its help', () => {
    const commands = everyCommand(buildProgram(() => {}, false) as unknown as CommandUnknownOpts);
    expect(commands.length).toBeGreaterThan(60);
    const missing = commands.flatMap(({ path, cmd }) => {
      let help = '';
      cmd.configureOutput({ writeOut: (t) => void (help += t) });
      cmd.outputHelp();
      return cmd.description() && help.includes('$ agent-wallet') && help.includes('Exit codes: 0 ok') ? [] : [path.join(' ')];
    });
    expect(missing).toEqual([]);
  });

  test('no arguments prints the overview, exit 0; --version and version print the version', async () => {
    const overview = await runCli([]);
    expect(overview.code).toBe(0);
    expect(overview.stdout).toContain('completion <shell>');
    for (const args of [['--version'], ['version']]) {
      const res = await runCli(args);
      expect(res.code).toBe(0);
      expect(res.stdout).toBe(`${VERSION}\n`);
    }
  });
});

describe('usage errors: exit 2 with a suggestion', () => {
  test('histroy suggests history', async () => {
    const res = await runCli(['histroy']);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain("unknown command 'histroy'");
    expect(res.stderr).toContain('Did you mean history?');
    expect(res.stdout).toBe('');
  });

  test('a mistyped flag suggests the flag; with --json the error is the CLIENT_USAGE envelope on stdout', async () => {
    const res = await runCli(['pay', 'alice', '5', '--not', 'lunch']);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('Did you mean --note?');
    const json = await runCli(['pay', 'alice', '5', '--not', 'lunch', '--json']);
    expect(json.code).toBe(2);
    expect(json.json).toEqual({
      success: false,
      error: { code: 'CLIENT_USAGE', message: expect.stringContaining("unknown option '--not'"), how_to_fix: 'Fix the command line: run agent-wallet help for the usage.' },
    });
  });

  test('set-api-key with a malformed key says what is wrong with it (exit 2)', async () => {
    const res = await runCli(['set-api-key', 'wallet_bot_WRONG', '--json', '--home', '/nonexistent-agent-wallet-home']);
    expect(res.code).toBe(2);
    expect(res.json.error.message).toContain('must be base58');
    expect(res.json.error.message).toContain('"O" is not');
  });

  test('an amount of 0 is a usage error (exit 2) like any malformed amount, before the profile is read', async () => {
    for (const args of [['pay', 'alice', '0'], ['pay', 'alice', '-1'], ['withdraw', '0', 'So11111111111111111111111111111111111111112', '--reason', 'x'], ['pay', 'alice', '0.0000001']]) {
      const res = await runCli([...args, '--json', '--home', '/nonexistent-agent-wallet-home']);
      expect({ args, code: res.code, error: res.json?.error?.code }).toEqual({ args, code: 2, error: 'CLIENT_USAGE' });
    }
  });

  test('a missing operand, a missing required flag and a group without its subcommand are exit 2', async () => {
    expect((await runCli(['rename'])).code).toBe(2);
    const fund = await runCli(['fund-request', '5']);
    expect(fund.code).toBe(2);
    expect(fund.stderr).toContain("required option '--reason <text>' not specified");
    expect((await runCli(['admin'])).code).toBe(2);
    expect((await runCli(['merchant', 'frobnicate'])).code).toBe(2);
  });
});

describe('global flags', () => {
  test('apply after a group name as after the command (merchant --json info, withdraw --json get ID)', async () => {
    const home = tempDir('aw-cli-globals-');
    for (const args of [['merchant', '--json', 'info', '--home', home], ['withdraw', '--json', '--home', home, 'get', 'wd_1'], ['balance', '--home', home, '--json']]) {
      const res = await runCli(args);
      expect(res.code).toBe(4);
      expect(res.json.error.code).toBe('CLIENT_PROFILE');
    }
  });
});

describe('global flags before the command', () => {
  test('--profile, --home and --json before the command name work as after it (agent, merchant, owner)', async () => {
    const home = tempDir('aw-cli-globals-before-');
    for (const args of [['--profile', 'shop', '--home', home, '--json', 'info'], ['--json', '--profile=shop', 'merchant', 'info', '--home', home], ['--home', home, '--json', 'withdraw', 'get', 'wd_1', '--profile', 'shop']]) {
      const res = await runCli(args);
      expect({ args, code: res.code, error: res.json?.error?.code }).toEqual({ args, code: 4, error: 'CLIENT_PROFILE' });
      expect(res.json.error.message).toMatch(/no (merchant )?profile "shop"/);
    }
    const nearest = await runCli(['--profile', 'a', '--home', home, 'info', '--profile', 'b', '--json']);
    expect(nearest.json.error.message).toContain('no profile "b"');
    const owner = await runCli(['--json', '--server', 'http://127.0.0.1:9/v1', 'owner', 'recover', 'status', 'wal_1']);
    expect(owner.code).toBe(2);
    expect(owner.json.error.message).toContain('owner commands need an owner API token');
  }, 20_000);

  test('--json before an admin command reaches it; a flag the command does not take is exit 2 naming it', async () => {
    const dir = tempDir('aw-cli-globals-admin-');
    const doctor = await runCli(['--json', 'admin', 'doctor', '--data-dir', dir]);
    expect(doctor.json.checks).toBeArray();
    const serve = await runCli(['--profile', 'shop', 'serve', '--data-dir', dir]);
    expect(serve.code).toBe(2);
    expect(serve.stderr).toContain("--profile does not apply to 'serve'");
  }, 20_000);

  test('--help, --version and usage errors still work with global flags before the command', async () => {
    const help = await runCli(['--json', 'pay', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toStartWith('Usage: agent-wallet pay');
    const top = await runCli(['--help']);
    expect(top.stdout).toContain('--profile <name>');
    expect((await runCli(['--version'])).stdout).toBe(`${VERSION}\n`);
    const typo = await runCli(['--profile', 'shop', 'histroy']);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain('Did you mean history?');
    const missing = await runCli(['--profile']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('argument missing');
  }, 20_000);
});

describe('completion', () => {
  /** What bash offers after `agent-wallet WORDS…` with the generated script loaded. */
  async function bashComplete(script: string, words: string[]): Promise<string[]> {
    const line = ['agent-wallet', ...words].map((w) => `'${w}'`).join(' ');
    const proc = Bun.spawn(['bash', '-c', `source /dev/stdin; COMP_WORDS=(${line}); COMP_CWORD=${words.length}; _agent_wallet; printf '%s\\n' "\${COMPREPLY[@]}"`], {
      stdin: new TextEncoder().encode(script),
      stdout: 'pipe',
    });
    return (await new Response(proc.stdout).text()).split('\n').filter(Boolean);
  }

  test('bash: commands, subcommands and flags of the command typed so far', async () => {
    const res = await runCli(['completion', 'bash']);
    expect(res.code).toBe(0);
    expect(res.stdout).toContain('complete -o default -F _agent_wallet agent-wallet');
    expect(await bashComplete(res.stdout, ['his'])).toEqual(['history']);
    expect(await bashComplete(res.stdout, ['admin', 'catalog', ''])).toEqual(['add', 'list', 'remove', 'verify', 'help', '--help']);
    expect(await bashComplete(res.stdout, ['pay', 'alice', '--no'])).toEqual(['--note', '--no-confirm']);
  });

  test('zsh and fish scripts; an unknown shell is exit 2 naming the choices', async () => {
    const zsh = await runCli(['completion', 'zsh']);
    expect(zsh.code).toBe(0);
    expect(zsh.stdout).toContain('bashcompinit');
    const fish = await runCli(['completion', 'fish']);
    expect(fish.code).toBe(0);
    expect(fish.stdout).toContain(`complete -c agent-wallet -f -n "__agent_wallet_at ''" -a 'history'`);
    expect(fish.stdout).toContain(`complete -c agent-wallet -n "__agent_wallet_at 'admin catalog add'" -l 'name'`);
    const bad = await runCli(['completion', 'tcsh']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('bash, zsh, fish');
  });
});

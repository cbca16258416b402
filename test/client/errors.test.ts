/** One code table for client-side failures: the CLI's --json and the MCP server give the same envelope. */
import { describe, expect, test } from 'bun:test';
import { ConnectionError } from '../../src/client/api.ts';
import { CLIENT_ERRORS, CustodyCheckError } from '../../src/client/errors.ts';
import { ProfileError } from '../../src/client/profile.ts';
import { WalletFileError } from '../../src/client/wallet-file.ts';
import { EXIT, printError } from '../../src/cli/output.ts';
import { envelopeOf } from '../../src/mcp/results.ts';

function cliJson(err: unknown): { code: number; envelope: any } {
  let out = '';
  const code = printError({ json: true, out: (t) => (out += t), err: () => {} }, err);
  return { code, envelope: JSON.parse(out) };
}

describe('client error table', () => {
  test('a custody refusal is CLIENT_CUSTODY_CHECK with its how_to_fix and details, exit 1, in both', () => {
    const err = new CustodyCheckError('refusing to sign: x', { howToFix: 'do y', details: { username: 'bob' } });
    const cli = cliJson(err);
    expect(cli.code).toBe(EXIT.error);
    expect(cli.envelope).toEqual({ success: false, error: { code: 'CLIENT_CUSTODY_CHECK', message: 'refusing to sign: x', how_to_fix: 'do y', username: 'bob' } });
    expect(envelopeOf(err)).toEqual(cli.envelope);
    expect(cliJson(new CustodyCheckError('plain')).envelope.error.how_to_fix).toBe(CLIENT_ERRORS.CLIENT_CUSTODY_CHECK);
  });

  test('every shared code has a real how_to_fix, the same in the CLI and MCP', () => {
    const cases: [unknown, string][] = [
      [new ProfileError('no profile'), 'CLIENT_PROFILE'],
      [new ConnectionError('down'), 'CLIENT_CONNECTION'],
      [new WalletFileError('edited'), 'CLIENT_WALLET_FILE'],
      [new Error('boom'), 'CLIENT_INTERNAL'],
    ];
    for (const [err, code] of cases) {
      const { envelope } = cliJson(err);
      expect(envelope.error.code).toBe(code);
      expect(envelope.error.how_to_fix.length).toBeGreaterThan(20);
      expect(envelopeOf(err)).toEqual(envelope);
    }
    expect(cliJson(new ProfileError('no profile')).code).toBe(EXIT.auth);
  });
});

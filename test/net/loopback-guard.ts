/**
 * Test-only safety net for the outbound tests: replaces `connect` of `node:net` and `node:tls`
 * (for every importer, including `src/net/outbound.ts`) with a version that records each target
 * and THROWS before any socket exists when the target is not a loopback literal. So a bug in
 * the code under test can never send a packet off this machine, and "no connection was
 * attempted" is observable even for addresses no local listener could see.
 */
import { mock } from 'bun:test';
import * as realNet from 'node:net';
import * as realTls from 'node:tls';

/** Hosts passed to `net.connect` / `tls.connect` since the last {@link resetConnectAttempts}. */
export const connectAttempts: string[] = [];

/** Forgets recorded attempts (call before each case). */
export function resetConnectAttempts(): void {
  connectAttempts.length = 0;
}

function isLoopbackLiteral(host: string): boolean {
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host) || host === '::1';
}

function guard<F extends (...args: never[]) => unknown>(real: F): F {
  return ((...args: unknown[]) => {
    const first = args[0];
    if (typeof first === 'object' && first !== null && 'host' in first) {
      const host = String((first as { host: unknown }).host);
      connectAttempts.push(host);
      if (!isLoopbackLiteral(host)) throw new Error(`loopback guard: refused a connection to ${host}`);
    }
    return (real as unknown as (...a: unknown[]) => unknown)(...args);
  }) as unknown as F;
}

const net = { ...realNet, connect: guard(realNet.connect), createConnection: guard(realNet.createConnection) };
const tls = { ...realTls, connect: guard(realTls.connect) };
mock.module('node:net', () => ({ ...net, default: net }));
mock.module('node:tls', () => ({ ...tls, default: tls }));

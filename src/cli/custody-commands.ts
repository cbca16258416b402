/**
 * What the agent pinned (src/client/custody.ts), on its side only:
 *   payees [--json]          username and x402-host pins: address, first and last paid, count
 *   payees forget USER|HOST  drops a pin (the next payment pins again)
 *   ceiling [AMOUNT]         the profile's ceiling for amounts that are not the agent's own words
 *   fees [accept]            the pinned fee schedule beside the published one; accept pins the published one
 */
import type { PingAnswer } from '../client/custody.ts';
import { acceptNewFees, pinsOf, updatePins, type SaveProfile } from '../client/pins.ts';
import { formatUsdc, parseUsdc } from '../domain/money.ts';
import { commandFlags, profileClient, type CliContext } from './context.ts';
import { EXIT, printData } from './output.ts';
import { UsageError } from './usage.ts';

type Command = (ctx: CliContext) => Promise<number>;

/** Applies a change to the profile file as it is now, under its lock. */
export function saver(ctx: Pick<CliContext, 'store' | 'profileName'>): SaveProfile {
  return (change) => ctx.store.update(ctx.profileName, change);
}

export const CUSTODY_COMMANDS: Record<string, Command> = {
  payees: async (ctx) => {
    const { positional } = commandFlags(ctx, {});
    const { profile, api } = profileClient(ctx);
    const pins = await pinsOf(api, profile, saver(ctx));
    if (positional[0] === 'forget') {
      const name = positional[1]!.replace(/^@/, '').toLowerCase();
      const book = pins.payees[name] ? pins.payees : pins.x402_hosts[name] ? pins.x402_hosts : null;
      if (!book) throw new UsageError(`no pin for "${name}"; see agent-wallet payees`);
      const forgotten = book[name];
      updatePins(profile, saver(ctx), (p) => {
        if (p.payees[name]) delete p.payees[name];
        else delete p.x402_hosts[name];
      });
      printData(ctx, { forgotten: name, ...forgotten }, `Forgot the pin of ${name}; the next payment pins its address again.`);
      return EXIT.ok;
    }
    const items = [
      ...Object.entries(pins.payees).map(([username, p]) => ({ username, ...p })),
      ...Object.entries(pins.x402_hosts).map(([host, p]) => ({ host, ...p })),
    ];
    if (ctx.json) printData(ctx, { items });
    else if (items.length === 0) ctx.out('No pinned payees yet: the first payment to a username (or x402 host) pins its address.\n');
    else for (const i of items) ctx.out(`${'username' in i ? `@${i.username}` : i.host}  ${i.kind}  ${i.address}  first ${i.first_paid}  last ${i.last_paid}  ${i.count} payment(s)\n`);
    return EXIT.ok;
  },

  ceiling: async (ctx) => {
    const { positional } = commandFlags(ctx, {});
    const { profile, api } = profileClient(ctx);
    await pinsOf(api, profile, saver(ctx));
    if (positional[0] !== undefined) {
      const p = parseUsdc(positional[0]);
      if (!p.ok) throw new UsageError(`ceiling ${positional[0]} ${p.reason}`);
      updatePins(profile, saver(ctx), (pins) => {
        pins.max_amount = formatUsdc(p.micro);
      });
    }
    printData(ctx, { max_amount: profile.custody!.max_amount }, 'The most this profile signs for an amount you did not state yourself (a paylink, an x402 price); --max-amount overrides it per call.');
    return EXIT.ok;
  },

  fees: async (ctx) => {
    const { positional } = commandFlags(ctx, {});
    const { profile, api } = profileClient(ctx);
    if (positional[0] === 'accept') {
      printData(ctx, { pinned: (await acceptNewFees(api, profile, saver(ctx))).fees }, 'Pinned the fee schedule the server publishes now.');
      return EXIT.ok;
    }
    const pins = await pinsOf(api, profile, saver(ctx));
    printData(ctx, { pinned: pins.fees, published: (await api.call<PingAnswer>('bot', 'ping')).fees });
    return EXIT.ok;
  },
};

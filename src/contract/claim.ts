/**
 * Contract of the public claim actions (SPEC "Public endpoint": claim_info; DESIGN §7). The claim
 * page at `{public_url}/claim/{wallet_id}` is a thin layer over the same functions.
 */
import { Type as T } from '@sinclair/typebox';
import { Id, Params } from './common.ts';
import { action } from './action.ts';

export const CLAIM = {
  claim_info: action({
    endpoint: 'public',
    auth: 'none',
    readOnly: true,
    params: Params({ wallet_id: Id('wallet', 'the wallet_id from the claim URL') }),
    summary: 'Claim information of a wallet: name, username, status and the pledged owner e-mail, masked.',
  }),
  claim: action({
    endpoint: 'public',
    auth: 'none',
    params: Params({
      wallet_id: Id('wallet', 'the wallet_id from the claim URL'),
      claim_code: T.String({ minLength: 1, maxLength: 32, description: 'the claim code register returned, e.g. K7QM-4TZP (case, spaces and dashes are ignored)' }),
      email: T.String({ minLength: 3, maxLength: 254, description: "the owner's e-mail address; the one-time link goes there" }),
    }),
    summary:
      'Checks the claim code and mails a one-time link (valid 15 minutes) to the e-mail; following it claims the wallet and opens the owner dashboard. Five wrong codes lock the claim for 15 minutes.',
  }),
};

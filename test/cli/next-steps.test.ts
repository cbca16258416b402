import { expect, test } from 'bun:test';
import { approvalNextStep, paylinkNextStep, paymentNextStep, registerNextStep, withNextStep } from '../../src/cli/next-steps.ts';

test('a payment names the exact command for each status that has a next step, and keeps the API words otherwise', () => {
  expect(paymentNextStep({ transaction_id: 'tx_1', status: 'pre_approved' })).toBe('agent-wallet confirm tx_1');
  expect(paymentNextStep({ transaction_id: 'tx_1', status: 'approved' })).toBe('agent-wallet confirm tx_1');
  expect(paymentNextStep({ transaction_id: 'tx_1', status: 'awaiting_approval', approval_id: 'apr_1' })).toBe('wait for the owner: agent-wallet approval apr_1 --wait 30, then agent-wallet confirm tx_1');
  expect(paymentNextStep({ transaction_id: 'tx_1', status: 'pending' })).toBe('being sent to Solana: agent-wallet events --wait 30 shows payment.completed');
  for (const status of ['completed', 'rejected', 'failed', 'expired', 'cancelled']) expect(paymentNextStep({ transaction_id: 'tx_1', status })).toBeNull();
});

test('an approval names how to finish what it approved (payment, withdrawal, x402 purchase) or how to wait', () => {
  expect(approvalNextStep({ status: 'approved', subject_type: 'payment', transaction_id: 'tx_2' })).toBe('the owner approved it: agent-wallet confirm tx_2');
  expect(approvalNextStep({ status: 'approved', subject_type: 'withdrawal' })).toBe('the owner approved it: agent-wallet withdraw confirm WD_ID (the withdrawal id withdraw printed)');
  expect(approvalNextStep({ status: 'approved', subject_type: 'x402' })).toBe('the owner approved it: agent-wallet x402 resume FETCH_ID (the fetch id x402 fetch printed)');
  expect(approvalNextStep({ status: 'pending', approval_id: 'apr_2' })).toBe('wait for the owner: agent-wallet approval apr_2 --wait 30');
  expect(approvalNextStep({ status: 'rejected', approval_id: 'apr_2' })).toBeNull();
});

test('an open paylink names how to send it and how another agent pays it, with the prefix of who runs it (agent or merchant)', () => {
  expect(paylinkNextStep({ status: 'open', request_id: 'req_1' }, 'agent-wallet merchant')).toBe(
    'share the url, or send it: agent-wallet merchant request send req_1 --email ADDRESS | --wallet USERNAME; another agent pays it with: agent-wallet pay --request req_1',
  );
  expect(paylinkNextStep({ status: 'paid', request_id: 'req_1' }, 'agent-wallet')).toBeNull();
});

test('a new unclaimed wallet names the claim, the commands that work until then and where the key was saved; a step replaces the API words only when there is one', () => {
  expect(registerNextStep({ status: 'unclaimed', claim_url: 'http://x/claim/wal_1', claim_code: 'AB12-CD34' }, '/home/a/.agent-wallet/default.json')).toBe(
    'give your owner the claim URL http://x/claim/wal_1 and the claim code AB12-CD34; until they claim it only agent-wallet info, rename and set-owner work (agent-wallet info shows the status). The API key is saved in /home/a/.agent-wallet/default.json.',
  );
  expect(withNextStep({ next_step: 'call confirm_payment' }, null)).toEqual({ next_step: 'call confirm_payment' });
  expect(withNextStep({ next_step: 'call confirm_payment' }, 'agent-wallet confirm tx_1')).toEqual({ next_step: 'agent-wallet confirm tx_1' });
});

/**
 * Numbered migrations after schema.sql (version 1), in order: entry i takes the database from
 * schema version i + 1 to i + 2. Each is a `NNNN_name.sql` file imported as text and runs in one
 * transaction together with the user_version bump and a foreign key check. A fresh database gets
 * schema.sql and then every step, so the current shape is schema.sql plus these files.
 */
import merchantPaylinks from './0001_merchant_paylinks.sql' with { type: 'text' };
import walletSpend from './0002_wallet_spend.sql' with { type: 'text' };
import priorityFee from './0003_priority_fee.sql' with { type: 'text' };
import tokenWatch from './0004_token_watch.sql' with { type: 'text' };
import holderIndexes from './0005_holder_indexes.sql' with { type: 'text' };
import recoveryEnrollments from './0006_recovery_enrollments.sql' with { type: 'text' };
import watchMoved from './0007_watch_moved.sql' with { type: 'text' };
import keyRefreshes from './0008_key_refreshes.sql' with { type: 'text' };
import recoverySweeps from './0009_recovery_sweeps.sql' with { type: 'text' };
import x402Pending from './0010_x402_pending.sql' with { type: 'text' };
import x402SignIns from './0011_x402_sign_ins.sql' with { type: 'text' };
import x402Sales from './0012_x402_sales.sql' with { type: 'text' };
import decisionLog from './0013_decision_log.sql' with { type: 'text' };
import saleFees from './0014_sale_fees.sql' with { type: 'text' };
import saleNetworkCosts from './0015_sale_network_costs.sql' with { type: 'text' };
import fundRequestAfter from './0016_fund_request_after.sql' with { type: 'text' };
import refreshCustody from './0017_refresh_custody.sql' with { type: 'text' };
import settledOut from './0018_settled_out.sql' with { type: 'text' };
import ownerPasskeys from './0019_owner_passkeys.sql' with { type: 'text' };

export const MIGRATIONS: readonly string[] = [merchantPaylinks, walletSpend, priorityFee, tokenWatch, holderIndexes, recoveryEnrollments, watchMoved, keyRefreshes, recoverySweeps, x402Pending, x402SignIns, x402Sales, decisionLog, saleFees, saleNetworkCosts, fundRequestAfter, refreshCustody, settledOut, ownerPasskeys];

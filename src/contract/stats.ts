/** Contract of the public statistics (SPEC "Public endpoint": stats). */
import { NoParams } from './common.ts';
import { action } from './action.ts';

/** How long one computed answer of `stats` is served before it is computed again. */
export const STATS_CACHE_SECONDS = 60;

export const STATS = {
  stats: action({
    endpoint: 'public',
    auth: 'none',
    readOnly: true,
    params: NoParams,
    summary: `Service statistics: wallets, claimed wallets, merchants, completed payments and their volume in USDC (cached ${STATS_CACHE_SECONDS} s).`,
  }),
};

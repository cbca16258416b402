/**
 * Associated data for everything sealed under the master key. Binding each ciphertext to the row
 * it belongs to means a sealed value copied into another row (another wallet's share, another
 * session's state) fails to open instead of being used.
 */
export const AAD = {
  dkgState: (dkgSessionId: string) => `dkg-state:${dkgSessionId}`,
  dkgKey: (dkgSessionId: string) => `dkg-key:${dkgSessionId}`,
  walletKey: (walletId: string) => `wallet-key:${walletId}`,
  claimCode: (walletId: string) => `claim-code:${walletId}`,
  exportKey: (exportId: string) => `export-key:${exportId}`,
  signNonces: (signSessionId: string) => `sign-nonces:${signSessionId}`,
} as const;

/**
 * Webhook signing secrets at rest: sealed under the master key and bound to their endpoint, so
 * a blob copied into another endpoint's row fails to open. A secret is shown to the merchant
 * once (set_webhook, rotate_webhook_secret, register with webhook_url) and never again.
 */
import { open, seal } from '../frost/seal.ts';

const aad = (endpointId: string) => `webhook-secret:${endpointId}`;

/** Seals a `whsec_…` secret for the row of `endpointId`. */
export function sealWebhookSecret(masterKey: Uint8Array, endpointId: string, secret: string): Uint8Array {
  return seal(masterKey, new TextEncoder().encode(secret), aad(endpointId));
}

/** Opens a secret sealed by {@link sealWebhookSecret} for the same endpoint. */
export function openWebhookSecret(masterKey: Uint8Array, endpointId: string, sealed: Uint8Array): string {
  return new TextDecoder().decode(open(masterKey, sealed, aad(endpointId)));
}

/** The channel an owner acted through; recorded in the audit log. */
export type Via = 'api' | 'dashboard' | 'email';

/** The actor string of audit entries and approval decisions. */
export function ownerActor(ownerId: string, via: Via): string {
  return `owner:${ownerId} via ${via}`;
}

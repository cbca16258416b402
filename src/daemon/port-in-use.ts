/** A taken port, said in one line naming the flag that changes it (no stack trace). Its own module: the CLI's entry imports it without loading the daemon. */
export class PortInUseError extends Error {
  override readonly name = 'PortInUseError';
}

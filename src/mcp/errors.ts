/** A failure the MCP server finds itself (bad tool input, a file in the way), rendered like an API error. */
export class ToolError extends Error {
  override readonly name = 'ToolError';
  constructor(
    readonly errorCode: string,
    message: string,
    readonly howToFix: string,
  ) {
    super(message);
  }
}

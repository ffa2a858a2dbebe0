/**
 * A failure the client command reports as one line on stderr (`signalbox: <message>`) with its exit code: 1 for
 * anything that went wrong (a refused request, an unreachable server, a bad argument).
 */
export class ClientError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
    /** The server's error code when the server refused the request (e.g. missing_token_scope). */
    readonly code?: string,
  ) {
    super(message);
  }
}

/** A command line the command cannot take: reported like any ClientError, with a pointer to the command's help. */
export class UsageError extends ClientError {}

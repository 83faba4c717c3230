import type { IncomingMessage } from 'node:http';

/**
 * How much of a body the answer did not need is still read, and for how long, before the
 * connection is cut (nginx's lingering close, bounded by bytes as well as time). 8 MiB exceeds
 * what Linux queues between the two ends by default (send buffer up to 4 MiB, receive up to
 * 6 MiB), so a client that stops sending once it sees the answer is never cut.
 */
export const LINGERING_CLOSE = { maxBytes: 8 * 1024 * 1024, maxMs: 5_000 };

/**
 * Called when an error is answered before the request's body has all arrived (a 413 on a
 * declared or counted size, a 401 or 404 on an upload). Closing at once would reset the
 * connection while the client still sends, and a reset discards the answer the client has
 * received but not read yet: Node's fetch (undici) then reports EPIPE and no status, where
 * curl happened to read it first. So the connection stays open while the rest of the body is
 * read and dropped, up to the bounds above; a body that ends within them leaves the connection
 * reusable, one that does not is closed (FIN) and then cut once the client has had time to read the answer.
 */
export function lingerOnUnreadBody(req: IncomingMessage, limits = LINGERING_CLOSE): void {
  if (req.complete || req.destroyed) return;
  let drained = 0;
  const cut = () => {
    stop();
    req.socket?.destroy();
  };
  // Past the byte bound: no more reading, and the gateway's side closed with a FIN, not a reset: a
  // reset makes the client's kernel drop what it received and its program has not read yet (the
  // answer, on a busy client), a FIN lets it read the answer first. The client's further writes
  // stall on a full window until the connection is cut, maxMs later.
  const closeAfterAnswer = () => {
    stop();
    req.pause();
    const socket = req.socket;
    socket?.end();
    setTimeout(() => socket?.destroy(), limits.maxMs).unref();
  };
  const timer = setTimeout(cut, limits.maxMs);
  timer.unref();
  const onData = (chunk: Buffer) => {
    drained += chunk.length;
    if (drained > limits.maxBytes) closeAfterAnswer();
  };
  const stop = () => {
    clearTimeout(timer);
    req.off('data', onData);
    req.off('end', stop);
    req.off('close', stop);
  };
  // Whatever consumed the body (a parser, a driver's write) has given up on it.
  req.unpipe();
  req.on('data', onData);
  req.once('end', stop);
  req.once('close', stop);
  req.resume();
}

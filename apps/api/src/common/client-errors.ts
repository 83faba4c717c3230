import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { LINGERING_CLOSE } from './lingering-close';

/**
 * Answers for requests Node's HTTP parser refuses before the gateway sees them ('clientError'):
 * a request head over the server's maxHeaderSize (431), a head not complete within headersTimeout
 * (408), chunk extensions over Node's limit (413), anything else malformed (400). Node's own
 * answers carry no body, and Node destroys the socket right after writing one: a client still
 * sending the rest of an oversized head (or a body after it) then gets a reset, which discards the
 * answer it has received but not read (Node's fetch reported "other side closed" or EPIPE instead
 * of the 431). Here each answer is a complete HTTP message with the gateway's JSON error body, and
 * the connection is closed like an early error answer (lingering-close.ts): FIN first, what the
 * client still sends read and dropped within the same bounds, then cut.
 */
export function answerClientErrors(server: Server, maxHeadBytes: number, limits = LINGERING_CLOSE): void {
  // Answers under way per socket: a head refused on a kept-alive connection (pipelined behind a
  // request still being answered) is answered after that answer, not in the middle of it.
  const answering = new WeakMap<Socket, number>();
  const afterAnswers = new WeakMap<Socket, () => void>();
  server.on('request', (req, res) => {
    const socket = req.socket;
    answering.set(socket, (answering.get(socket) ?? 0) + 1);
    res.once('close', () => {
      const left = (answering.get(socket) ?? 1) - 1;
      answering.set(socket, left);
      if (left === 0) afterAnswers.get(socket)?.();
    });
  });
  const answered = new WeakSet<Duplex>();
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    // The parser stays in error and reports every later chunk again: the first report is answered.
    if (answered.has(socket)) return;
    answered.add(socket);
    if (error.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    if ((answering.get(socket as Socket) ?? 0) > 0) {
      // An oversized head pipelined behind a request still being answered: that answer first. Any other
      // error on a connection with a request under way (the client closed mid-request, a body that breaks
      // the framing) means that request cannot complete: the connection ends at once, as Node ends it.
      // Waiting for its answer instead left such sockets open (CLOSE-WAIT) and server.close() waiting on them.
      if (error.code === 'HPE_HEADER_OVERFLOW') afterAnswers.set(socket as Socket, () => answerOn(socket, error));
      else socket.destroy();
    } else answerOn(socket, error);
  });

  function answerOn(socket: Duplex, error: NodeJS.ErrnoException): void {
    if (!socket.writable) {
      socket.destroy();
      return;
    }
    const answer = clientErrorAnswer(error, maxHeadBytes);
    const body = JSON.stringify({ success: false, message: answer.message, error: { code: answer.code } });
    const message =
      `HTTP/1.1 ${answer.status} ${answer.reason}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;
    // A slow head (408) or a malformed one (400) is not followed by much the client still has to
    // send, and lingering would give a slow client more time: closed once the answer is out.
    if (answer.status === 408 || answer.status === 400) socket.end(message, () => socket.destroy());
    else {
      socket.end(message);
      lingerThenCut(socket, limits);
    }
  }
}

interface ClientErrorAnswer {
  status: number;
  reason: string;
  code: string;
  message: string;
}

export function clientErrorAnswer(error: NodeJS.ErrnoException, maxHeadBytes: number): ClientErrorAnswer {
  switch (error.code) {
    case 'HPE_HEADER_OVERFLOW':
      return {
        status: 431,
        reason: 'Request Header Fields Too Large',
        code: 'REQUEST_HEAD_TOO_LARGE',
        message: `The request line and headers exceed ${maxHeadBytes / 1024} KiB: send long values (ids, ACL principals) in fewer or shorter parameters, or in the body where the route takes one`,
      };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { status: 408, reason: 'Request Timeout', code: 'REQUEST_TIMEOUT', message: 'The request head did not arrive in time' };
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return { status: 413, reason: 'Payload Too Large', code: 'PAYLOAD_TOO_LARGE', message: 'The chunk extensions of the body are too large' };
    default:
      return { status: 400, reason: 'Bad Request', code: 'MALFORMED_REQUEST', message: `Malformed HTTP request (${error.code ?? 'parse error'})` };
  }
}

/**
 * After the answer (and our FIN), whatever the client still sends is read and dropped, up to the
 * byte and time bounds of the lingering close; the connection is cut at the first bound reached,
 * or closes by itself once the client has closed its side too.
 */
function lingerThenCut(socket: Duplex, limits: typeof LINGERING_CLOSE): void {
  let drained = 0;
  const timer = setTimeout(() => socket.destroy(), limits.maxMs);
  timer.unref();
  const onData = (chunk: Buffer) => {
    drained += chunk.length;
    if (drained > limits.maxBytes) socket.destroy();
  };
  socket.on('data', onData);
  socket.once('close', () => {
    clearTimeout(timer);
    socket.off('data', onData);
  });
  socket.resume();
}

import { createServer, IncomingMessage, ServerResponse, STATUS_CODES, type RequestListener, type Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { envelope } from '../errors';

/** Slow clients must not hold connections forever; values sit below typical load-balancer idle timeouts. */
export interface ServerTimeLimits {
  headersTimeout: number;
  requestTimeout: number;
  keepAliveTimeout: number;
  /** How often Node checks the two limits above: a limit holds to within this. */
  connectionsCheckingInterval: number;
}

const SERVER_TIME_LIMITS: ServerTimeLimits = {
  headersTimeout: 10_000,
  requestTimeout: 30_000,
  keepAliveTimeout: 5_000,
  connectionsCheckingInterval: 1_000,
};

/** What Node's HTTP parser reports, as the contract's envelope rather than Node's plain-text default. */
function clientErrorStatus(code: string | undefined): { status: number; message: string } {
  if (code === 'HPE_HEADER_OVERFLOW') return { status: 431, message: 'Request Header Fields Too Large' };
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return { status: 408, message: 'Request Timeout' };
  return { status: 400, message: 'Malformed HTTP request' };
}

/**
 * Expect headers. Node would answer 100 Continue itself before the app has
 * looked at the request; the app is asked instead (the body reader says
 * continue once the declared size fits, else the 413 goes out with nothing
 * uploaded). Any other expectation is a 417, in the envelope.
 */
function handleExpectations(server: Server): void {
  server.on('checkContinue', (req, res) => server.emit('request', req, res));
  server.on('checkExpectation', (_req, res: ServerResponse) => {
    const body = JSON.stringify(envelope(417, 'Expectation Failed: only Expect: 100-continue is supported'));
    res.writeHead(417, {
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Length': Buffer.byteLength(body),
      'Cache-Control': 'no-store',
      Connection: 'close',
    });
    res.end(body);
  });
}

/**
 * HTTP/1.1 requires a Host header. Node's own check (requireHostHeader, turned off in createHttpServer) answered
 * a bare 400 with an empty body; this one answers the envelope, as for any other malformed request, and closes.
 */
function requiringHost(app: RequestListener): RequestListener {
  return (req, res) => {
    if (req.headers.host !== undefined || req.httpVersionMajor !== 1 || req.httpVersionMinor !== 1) return app(req, res);
    const body = JSON.stringify(envelope(400, 'Missing Host header: HTTP/1.1 requires one'));
    res.shouldKeepAlive = false;
    res.writeHead(400, {
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Length': Buffer.byteLength(body),
      'Cache-Control': 'no-store',
      Connection: 'close',
    });
    res.end(body);
  };
}

/** Answers requests that never reach Express (unparseable bytes, headers too large, too slow) with the JSON envelope. */
function answerClientErrors(server: Server): void {
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    if (error.code === 'ECONNRESET' || socket.destroyed) {
      socket.destroy();
      return;
    }
    // Bytes after the server ended the connection: nothing more is answered, and what the client has not read is
    // dropped now (endConnection), not left to the kernel by a plain close.
    if (!socket.writable) {
      resetOnceShut(socket as Socket);
      return;
    }
    // Bytes after a request still being answered (a Content-Length shorter than the body): let that answer
    // go out, then close, rather than cut it off. A request whose own body broke (a malformed chunk) or that
    // timed out will never finish, so it is answered now.
    const pending = (socket as Duplex & { _httpMessage?: ServerResponse })._httpMessage;
    if (pending && !pending.headersSent && error.code !== 'ERR_HTTP_REQUEST_TIMEOUT' && pending.req.complete) {
      pending.shouldKeepAlive = false;
      return;
    }
    const { status, message } = clientErrorStatus(error.code);
    const body = JSON.stringify(envelope(status, message));
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n${body}`,
    );
    endConnection(socket as Socket);
  });
}

/** How long a client has, once the server ended its connection, to take the rest of its answers and close its side. */
const CLOSING_GRACE_MS = 1_000;

/**
 * How the server ends a connection it is done with (an answer with Connection: close, the keep-alive timeout, a
 * malformed or timed-out request, the drain): its answers, then FIN, and a reset unless the client closes its side
 * within CLOSING_GRACE_MS. A client that reads gets every answer and the FIN, and closes: its close is graceful. One
 * that does not read never sees the FIN; closed with FIN alone, its connection stayed in the kernel as an orphan
 * (FIN-WAIT-1) holding the answers it had not read (2.3 MB each for 50 clients pipelining GET /healthz, for minutes),
 * outside the connection limits. The reset makes the kernel drop them (issue 42, M1). Node cannot tell how much of
 * what it wrote the client has read (the kernel's send queue is not exposed), so the client's own close is the proof.
 * The HTTP server allows half-open sockets, so without the reset a peer that never reads nor closes would also keep
 * its slot of the connection limits forever (contract section 11: within a second).
 */
function endConnection(socket: Socket): void {
  if (socket.writableEnded) return;
  socket.end();
  const timer = setTimeout(() => resetOnceShut(socket), CLOSING_GRACE_MS).unref();
  socket.once('close', () => clearTimeout(timer));
}

/**
 * libuv refuses a reset while the FIN is on its way (end() called, its shutdown not done: EINVAL, and the socket is
 * left open), so the reset then waits for the shutdown, which follows the last write within a turn of the event
 * loop. Answers still queued in the process (the client's window closed) mean the shutdown has not begun.
 */
function resetOnceShut(socket: Socket): void {
  if (socket.writableLength === 0 && !socket.writableFinished) socket.once('finish', () => socket.resetAndDestroy());
  else socket.resetAndDestroy();
}

/**
 * Node ends connections itself in two places, both with close(2) as soon as the FIN is queued: after an answer with
 * Connection: close (socket.destroySoon()) and at the keep-alive timeout (socket.destroy(), unless 'timeout' has a
 * listener). Both go through endConnection instead.
 */
function endConnectionsThenReset(server: Server): void {
  server.on('connection', (socket: Socket) => {
    socket.destroySoon = () => endConnection(socket);
  });
  server.on('timeout', (socket: Socket) => endConnection(socket));
}

/**
 * Contract section 11: open connections per instance and per client address (the TCP peer), 0 turning either off;
 * and how long an answer may wait for its client to take it (WRITE_TIMEOUT_MS) before its connection is closed.
 */
export interface ConnectionLimits {
  maxConnections: number;
  maxConnectionsPerAddress: number;
  writeTimeout: number;
}

/** No limit on the number of connections (a server not given the settings, as in most tests); the contract's write timeout. */
const COUNTS_UNLIMITED: ConnectionLimits = { maxConnections: 0, maxConnectionsPerAddress: 0, writeTimeout: 30_000 };

/**
 * A connection past either limit is closed at once, before a byte is read, so one client holding sockets
 * cannot take every descriptor: Node's own server.maxConnections for the instance, a count per peer address
 * for each client.
 */
function limitConnections(
  server: Server,
  { maxConnections, maxConnectionsPerAddress }: Pick<ConnectionLimits, 'maxConnections' | 'maxConnectionsPerAddress'>,
): void {
  if (maxConnections > 0) server.maxConnections = maxConnections;
  if (maxConnectionsPerAddress === 0) return;
  const open = new Map<string, number>();
  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress ?? '';
    const count = (open.get(address) ?? 0) + 1;
    if (count > maxConnectionsPerAddress) {
      socket.destroy();
      return;
    }
    open.set(address, count);
    socket.once('close', () => {
      const left = (open.get(address) ?? 1) - 1;
      if (left === 0) open.delete(address);
      else open.set(address, left);
    });
  });
}

/**
 * Contract section 11: answers a client has not taken. Requests a connection pipelines behind PIPELINE_DEPTH answers
 * not yet taken are held, unanswered, and the connection is not read again until its client takes those answers: 50
 * pipelined GET /openapi.json (234 KB each) never read had each been answered into the process's memory. An answer
 * counts as taken once the kernel has it (the response's 'finish'), so what a silent client holds is its kernel
 * buffers and PIPELINE_DEPTH answers. An answer the client does not take within the write timeout closes the
 * connection, checked every connectionsCheckingInterval as Node checks its own time limits; the time starts once the
 * answer's first bytes went out, so the app's own work never counts.
 */
const PIPELINE_DEPTH = 1;

interface Answering {
  /** Responses of the requests handed to the app whose answers are not taken yet, oldest first. */
  pending: ServerResponse[];
  /** Requests read past PIPELINE_DEPTH: handed to the app, in order, as earlier answers are taken. */
  held: Array<[IncomingMessage, ServerResponse]>;
  /** When the oldest pending answer was first seen sent and waiting for the client (performance.now()). */
  waitingSince: number | undefined;
  readingStopped: boolean;
}

interface ReadableHandle {
  readStart(): number;
  readStop(): number;
}

/**
 * Node's HTTP parser reads the socket's handle itself (it consumes the stream), so socket.pause() does not stop
 * reads: 79,000 pipelined requests were read from a silent client in 3 s after it. The handle is told directly, its
 * `reading` flag left as it was, so that the socket's stream does not start it again on its own.
 */
function setReading(socket: Socket, reading: boolean): void {
  const handle = (socket as Socket & { _handle?: ReadableHandle | null })._handle;
  if (!handle || socket.destroyed) return;
  if (reading) handle.readStart();
  else handle.readStop();
}

/** Hands each request to the app unless PIPELINE_DEPTH answers of its connection are not taken yet; closes a connection whose answer waits past writeTimeout. */
function boundAnswers(
  server: Server,
  app: RequestListener,
  { writeTimeout }: Pick<ConnectionLimits, 'writeTimeout'>,
  checkEvery: number,
): void {
  const connections = new Map<Socket, Answering>();
  server.on('connection', (socket: Socket) => {
    connections.set(socket, { pending: [], held: [], waitingSince: undefined, readingStopped: false });
    socket.once('close', () => connections.delete(socket));
  });

  const handToApp = (answering: Answering, req: IncomingMessage, res: ServerResponse) => {
    answering.pending.push(res);
    res.once('close', () => {
      const at = answering.pending.indexOf(res);
      if (at === 0) answering.waitingSince = undefined;
      if (at >= 0) answering.pending.splice(at, 1);
      // The held requests of a connection closed, or ended by this answer (Connection: close), can never be
      // answered: they are dropped, not worked on.
      if (!req.socket.writable) {
        answering.held.length = 0;
        return;
      }
      while (answering.pending.length < PIPELINE_DEPTH && answering.held.length > 0) {
        const [heldReq, heldRes] = answering.held.shift() as [IncomingMessage, ServerResponse];
        handToApp(answering, heldReq, heldRes);
      }
      if (answering.readingStopped && answering.held.length === 0 && answering.pending.length < PIPELINE_DEPTH) {
        answering.readingStopped = false;
        setReading(req.socket as Socket, true);
      }
    });
    app(req, res);
  };

  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const socket = req.socket as Socket;
    const answering = connections.get(socket);
    if (!answering) return app(req, res);
    // A request read after the server ended its connection (a client pipelining past a Connection: close, or sending
    // as its idle connection timed out) is never answered: it is not worked on, and nothing more is read.
    if (!socket.writable) {
      answering.readingStopped = true;
      setReading(socket, false);
      return;
    }
    if (answering.pending.length < PIPELINE_DEPTH && answering.held.length === 0) return handToApp(answering, req, res);
    answering.held.push([req, res]);
    if (!answering.readingStopped) {
      answering.readingStopped = true;
      setReading(socket, false);
    }
  });

  const check = setInterval(() => {
    const now = performance.now();
    for (const [socket, answering] of connections) {
      const oldest = answering.pending[0];
      if (!oldest?.headersSent || socket.writableLength === 0) continue;
      answering.waitingSince ??= now;
      // A reset, not a graceful close: closed gracefully, the socket lingered as a kernel orphan (FIN-WAIT-1) holding
      // its unsent answers (3.77 MB each in the attack) outside the per-address count; a reset makes the kernel drop them.
      if (now - answering.waitingSince >= writeTimeout) socket.resetAndDestroy();
    }
  }, checkEvery).unref();
  server.once('close', () => clearInterval(check));
}

/** Each server's open connections, for the drain (closeConnectionsAfterAnswers). */
const openConnections = new WeakMap<Server, Set<Socket>>();

function trackConnections(server: Server): void {
  const sockets = new Set<Socket>();
  openConnections.set(server, sockets);
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
}

/**
 * For a drain: every answer still to come, to a request in flight or to one arriving on an open connection, says
 * Connection: close and closes its connection once sent. Connections then end with their answers, rather than
 * idling until keepAliveTimeout or being closed under a client whose next request is already on its way (which it
 * would see as a reset, not the drain's 503). The drain stops listening without closing the idle ones (shutdown.ts).
 */
export function closeConnectionsAfterAnswers(server: Server): void {
  server.prependListener('request', (_req: IncomingMessage, res: ServerResponse) => {
    res.shouldKeepAlive = false;
  });
  for (const socket of openConnections.get(server) ?? []) {
    const pending = (socket as Socket & { _httpMessage?: ServerResponse })._httpMessage;
    if (pending && !pending.headersSent) pending.shouldKeepAlive = false;
  }
}

/**
 * For a drain, once its first answers are on their way: connections that are answering no request (none begun,
 * or one whose headers have not all arrived) are closed. Nothing of theirs was applied, and Node's server.close()
 * waits for them: one silent connection held every stop to its time limit, and its exit code to 1. A request
 * whose headers arrive before this is answered (the drain's 503) and its connection closed with the answer.
 */
export function closeConnectionsWithoutRequests(server: Server): void {
  for (const socket of openConnections.get(server) ?? []) {
    if (!(socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage) endConnection(socket);
  }
}

/** The prototypes Express gives every request and response of an app (app.request, app.response). */
interface ExpressPrototypes {
  request: object;
  response: object;
}

function hasExpressPrototypes(listener: RequestListener): listener is RequestListener & ExpressPrototypes {
  const app = listener as RequestListener & Partial<ExpressPrototypes>;
  return typeof app.request === 'object' && typeof app.response === 'object';
}

/**
 * Node's request and response classes (createServer's documented IncomingMessage and ServerResponse options),
 * subclassed so that their instances are made on the app's own prototypes: the app's prototypes become the
 * subclasses' (each inheriting from the one Express made), and Express's app.handle, which sets every request's
 * and response's prototype to the app's, finds them in place. Swapping them was about 9% of a withdrawal's
 * instructions, and V8's loads on the swapped objects missed (docs/BENCHMARKS.md, "Counting instructions"). They
 * are classes, not functions that call Node's constructors: V8 sizes a subclass's objects for the properties
 * Node's constructors add, where those functions' objects fell into dictionary mode and cost more (issue 22).
 */
function onAppPrototypes(app: ExpressPrototypes): { IncomingMessage: typeof IncomingMessage; ServerResponse: typeof ServerResponse } {
  class AppRequest extends IncomingMessage {}
  class AppResponse<Request extends IncomingMessage = IncomingMessage> extends ServerResponse<Request> {}
  Object.setPrototypeOf(AppRequest.prototype, app.request);
  Object.setPrototypeOf(AppResponse.prototype, app.response);
  app.request = AppRequest.prototype;
  app.response = AppResponse.prototype;
  return { IncomingMessage: AppRequest, ServerResponse: AppResponse };
}

/**
 * The one way the app is served, by server.ts and by the tests alike: the
 * Express app with the time limits, the connection limits, the bound on answers
 * not taken (boundAnswers) and JSON answers for malformed HTTP (a missing Host too), its requests and
 * responses made on its own prototypes (onAppPrototypes). It does not listen.
 */
export function createHttpServer(
  app: RequestListener,
  limits: Partial<ServerTimeLimits> = {},
  connections: ConnectionLimits = COUNTS_UNLIMITED,
): Server {
  const { connectionsCheckingInterval, ...timeouts } = { ...SERVER_TIME_LIMITS, ...limits };
  const classes = hasExpressPrototypes(app) ? onAppPrototypes(app) : {};
  const server = createServer({ connectionsCheckingInterval, requireHostHeader: false, ...classes });
  Object.assign(server, timeouts);
  limitConnections(server, connections);
  boundAnswers(server, requiringHost(app), connections, connectionsCheckingInterval);
  endConnectionsThenReset(server);
  trackConnections(server);
  handleExpectations(server);
  answerClientErrors(server);
  return server;
}

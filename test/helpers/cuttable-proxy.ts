import net from 'node:net';

/** A TCP proxy to the database that a test can cut, freeze and restore, as a network partition, a stopped server or a hung one would. */
export class CuttableProxy {
  private readonly server: net.Server;
  private readonly sockets = new Set<net.Socket>();
  /** The connections from the receiver's side, a subset of sockets. */
  private readonly clients = new Set<net.Socket>();
  private open = true;
  private frozen = false;
  /** What reached the database side while frozen (a new connection, or bytes on one it had): someone is waiting on it. */
  private arrivedWhileFrozen = 0;

  private constructor(target: { host: string; port: number }) {
    this.server = net.createServer((client) => {
      if (!this.open) {
        client.destroy();
        return;
      }
      this.track(client);
      this.clients.add(client);
      client.on('close', () => this.clients.delete(client));
      if (this.frozen) {
        // Accepted, never answered: a connection attempt to a hung database.
        this.arrivedWhileFrozen += 1;
        client.pause();
        return;
      }
      const upstream = net.connect(target.port, target.host);
      this.track(upstream);
      client.pipe(upstream).pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
  }

  /** Whether anything reached the database since it froze: a statement sent, or a connection asked for. */
  reachedWhileFrozen(): boolean {
    return this.arrivedWhileFrozen > 0;
  }

  private track(socket: net.Socket): void {
    this.sockets.add(socket);
    socket.on('close', () => this.sockets.delete(socket));
    socket.on('error', () => undefined);
  }

  static async start(databaseUrl: string): Promise<{ proxy: CuttableProxy; url: string }> {
    const target = new URL(databaseUrl);
    const proxy = new CuttableProxy({ host: target.hostname, port: Number(target.port || 5432) });
    await new Promise<void>((resolve) => proxy.server.listen(0, '127.0.0.1', resolve));
    const url = new URL(databaseUrl);
    url.hostname = '127.0.0.1';
    url.port = String((proxy.server.address() as net.AddressInfo).port);
    return { proxy, url: url.toString() };
  }

  /** Drops every connection and refuses new ones. */
  cut(): void {
    this.open = false;
    for (const socket of this.sockets) socket.destroy();
  }

  /**
   * Stops forwarding in both directions without closing anything: nothing sent arrives, nothing comes back, not
   * even a goodbye. What clients send is read and dropped (a hung server's socket buffer would take it as well),
   * so that reachedWhileFrozen can tell a test that a statement was sent.
   */
  freeze(): void {
    this.frozen = true;
    for (const socket of this.sockets) {
      socket.unpipe();
      socket.pause();
    }
    for (const client of this.clients) {
      // Read to its end without answering its end: the goodbye of a closing client gets no goodbye back.
      client.allowHalfOpen = true;
      client.on('data', () => (this.arrivedWhileFrozen += 1));
      client.resume();
    }
  }

  restore(): void {
    this.open = true;
  }

  async stop(): Promise<void> {
    this.cut();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

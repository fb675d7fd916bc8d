import net from 'node:net';

/** A TCP proxy to the database that a test can cut and restore, as a network partition or a stopped server would. */
export class CuttableProxy {
  private readonly server: net.Server;
  private readonly sockets = new Set<net.Socket>();
  private open = true;

  private constructor(target: { host: string; port: number }) {
    this.server = net.createServer((client) => {
      if (!this.open) {
        client.destroy();
        return;
      }
      const upstream = net.connect(target.port, target.host);
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on('close', () => this.sockets.delete(socket));
        socket.on('error', () => undefined);
      }
      client.pipe(upstream).pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
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

  restore(): void {
    this.open = true;
  }

  async stop(): Promise<void> {
    this.cut();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

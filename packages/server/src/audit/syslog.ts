import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { isIP, type Socket, connect as tcpConnect } from 'node:net';
import { hostname } from 'node:os';

/** Where audit events go by syslog: `udp://host[:port]` or `tcp://host[:port]` (port 514 when left out). */
export type SyslogAddress = { protocol: 'udp' | 'tcp'; host: string; port: number };

/** Parses `SIGNALBOX_AUDIT_SYSLOG`; throws an Error saying what is wrong (never echoing the value). */
export function parseSyslogAddress(text: string): SyslogAddress {
  const m = /^(udp|tcp):\/\/(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(?::(\d{1,5}))?\/?$/.exec(text.trim());
  const [, protocol, named, portText] = m ?? [];
  const port = Number(portText ?? 514);
  if (!protocol || !named || port < 1 || port > 65535)
    throw new Error('must be udp://host:port or tcp://host:port (port 1-65535, 514 when left out)');
  const host = named.replace(/^\[(.*)\]$/, '$1');
  if (named.startsWith('[') && isIP(host) !== 6)
    throw new Error('must name a valid IPv6 address in brackets');
  return { protocol: protocol as SyslogAddress['protocol'], host, port };
}

/** Facility 13 (log audit), severity 6 (informational): PRI = 13 × 8 + 6. */
const PRI = 110;

/** RFC 5424's HOSTNAME: printable ASCII without spaces, at most 255 characters; `-` when there is none. */
const ownHost = () =>
  hostname()
    .replace(/[^\x21-\x7e]/g, '')
    .slice(0, 255) || '-';

/**
 * One RFC 5424 message: `<110>1 TIMESTAMP HOSTNAME signalbox PROCID audit - MSG`, the message being the event as
 * one line of JSON (JSON text never holds a raw line break).
 */
export function syslogLine(time: string, json: string, host = ownHost(), pid = process.pid) {
  return `<${PRI}>1 ${time} ${host} signalbox ${pid} audit - ${json}`;
}

/**
 * Sends lines to a syslog receiver. UDP: one datagram per message (a receiver that is down loses them, as UDP
 * does). TCP: one connection kept open and opened again after a failure, each message ended by a line feed
 * (RFC 6587's non-transparent framing); a write the receiver does not take within the timeout fails the send.
 */
export function syslogSender(address: SyslogAddress, timeoutMs: number) {
  let udp: UdpSocket | null = null;
  let tcp: Socket | null = null;

  const udpSend = async (lines: string[]) => {
    udp ??= createSocket(isIP(address.host) === 6 ? 'udp6' : 'udp4').on('error', () => {
      udp?.close();
      udp = null;
    });
    const socket = udp;
    for (const line of lines)
      await new Promise<void>((resolve, reject) =>
        socket.send(Buffer.from(line), address.port, address.host, (err) => (err ? reject(err) : resolve())),
      );
  };

  const dropTcp = () => {
    tcp?.destroy();
    tcp = null;
  };

  const tcpOpen = () =>
    new Promise<Socket>((resolve, reject) => {
      const socket = tcpConnect({ host: address.host, port: address.port });
      const timer = setTimeout(
        () => socket.destroy(Object.assign(new Error('timed out'), { code: 'ETIMEDOUT' })),
        timeoutMs,
      );
      socket.once('connect', () => {
        clearTimeout(timer);
        socket.setKeepAlive(true);
        resolve(socket);
      });
      socket.once('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
    });

  const tcpSend = async (lines: string[]) => {
    if (!tcp || tcp.destroyed) {
      dropTcp();
      const socket = await tcpOpen();
      // A later failure (the receiver went away) is found by the next write; the socket must not throw meanwhile.
      socket.on('error', () => {});
      socket.on('close', () => {
        if (tcp === socket) tcp = null;
      });
      // Anything the receiver sends back is ignored.
      socket.resume();
      tcp = socket;
    }
    const socket = tcp;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        dropTcp();
        reject(Object.assign(new Error('timed out'), { code: 'ETIMEDOUT' }));
      }, timeoutMs);
      socket.write(`${lines.join('\n')}\n`, (err) => {
        clearTimeout(timer);
        if (err) {
          dropTcp();
          reject(err);
        } else resolve();
      });
    });
  };

  return {
    send: (lines: string[]) => (address.protocol === 'udp' ? udpSend(lines) : tcpSend(lines)),
    close() {
      udp?.close();
      udp = null;
      dropTcp();
    },
  };
}

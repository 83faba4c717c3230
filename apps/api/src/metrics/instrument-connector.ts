import type { Connector } from '@gateway/connector-api';
import type { GatewayMetrics } from './gateway-metrics';

/** Members that are data, not operations or capability groups. */
const NOT_GROUPS = new Set(['publicParams']);

/**
 * The connector as the registry hands it out, every call counted and timed: the driver's own
 * methods (`getItem`) and those of its capability groups (`versioning.listVersions`), whatever the
 * kind, in this one place. A Proxy, so its groups' presence (deriveCapabilities) and fields such
 * as `localFiles.root` read through unchanged; its methods are wrapped, so nothing may rely on a
 * method's identity: a target finds a source it can copy directly by its `localFiles` group, and
 * that copy counts as `directCopy.copyFrom` (target) and `localFiles.unverifiedFile` (source).
 */
export function instrumentConnector<C extends Connector>(connector: C, metrics: GatewayMetrics): C {
  return wrap(connector, connector.id, '', metrics);
}

function wrap<T extends object>(target: T, connectorId: string, group: string, metrics: GatewayMetrics): T {
  const wrapped = new Map<PropertyKey, { original: unknown; proxy: unknown }>();
  return new Proxy(target, {
    get(object, property, receiver) {
      const value: unknown = Reflect.get(object, property, receiver);
      if (typeof property !== 'string' || property === 'constructor' || property === 'then') return value;
      const known = wrapped.get(property);
      if (known && known.original === value) return known.proxy;
      let proxy: unknown;
      if (typeof value === 'function') {
        const operation = group + property;
        // performance.now(), not hrtime.bigint(): a double allocates nothing, and a job makes a few calls per document.
        const seconds = (started: number) => (performance.now() - started) / 1e3;
        proxy = function (this: unknown, ...args: unknown[]) {
          const started = performance.now();
          let result: unknown;
          try {
            result = (value as (...a: unknown[]) => unknown).apply(this === receiver ? object : this, args);
          } catch (e) {
            metrics.connectorCall(connectorId, operation, e ?? 'error', seconds(started));
            throw e;
          }
          if (result instanceof Promise) {
            return result.then(
              (v: unknown) => {
                metrics.connectorCall(connectorId, operation, undefined, seconds(started));
                return v;
              },
              (e: unknown) => {
                metrics.connectorCall(connectorId, operation, e ?? 'error', seconds(started));
                throw e;
              },
            );
          }
          metrics.connectorCall(connectorId, operation, undefined, seconds(started));
          return result;
        };
      } else if (group === '' && value !== null && typeof value === 'object' && !NOT_GROUPS.has(property) && !Array.isArray(value)) {
        proxy = wrap(value, connectorId, `${property}.`, metrics);
      } else {
        return value;
      }
      wrapped.set(property, { original: value, proxy });
      return proxy;
    },
  });
}

import type { RouteSpec } from '../../../lib/manifest/types.ts';

export type RouteMatch<R extends Pick<RouteSpec, 'method' | 'path'>> =
  | { readonly kind: 'found'; readonly route: R; readonly params: Record<string, string> }
  | { readonly kind: 'wrong-method'; readonly allowed: string[] }
  | { readonly kind: 'none' };

interface Node<R> {
  literal: Map<string, Node<R>>;
  param: { name: string; node: Node<R> } | undefined;
  /** A last `{name+}` segment: the rest of the path, one segment or more. */
  rest: { name: string; routes: Map<string, R> } | undefined;
  routes: Map<string, R>;
}

const newNode = <R>(): Node<R> => ({ literal: new Map(), param: undefined, rest: undefined, routes: new Map() });

/**
 * Matches paths against route templates, literal segments before `{param}` ones and those before
 * a last `{rest+}`, so `/user/token/list` wins over `/user/token/{tokenId}`. Used by the local server and by the cloud
 * fallback function that answers unknown routes and wrong methods.
 */
export class RouteTable<R extends Pick<RouteSpec, 'method' | 'path'>> {
  private readonly root: Node<R> = newNode();

  constructor(routes: readonly R[]) {
    for (const route of routes) this.add(route);
  }

  private add(route: R): void {
    let node = this.root;
    const segments = segmentsOf(route.path);
    const greedy = /^\{(\w+)\+\}$/.exec(segments[segments.length - 1] ?? '')?.[1];
    if (greedy !== undefined) segments.pop();
    for (const segment of segments) {
      const param = /^\{(\w+)\}$/.exec(segment)?.[1];
      if (param === undefined) {
        let next = node.literal.get(segment);
        if (!next) node.literal.set(segment, (next = newNode()));
        node = next;
      } else {
        if (node.param && node.param.name !== param) throw new Error(`Conflicting parameter names at ${route.path}`);
        node.param ??= { name: param, node: newNode() };
        node = node.param.node;
      }
    }
    let routes = node.routes;
    if (greedy !== undefined) {
      if (node.rest && node.rest.name !== greedy) throw new Error(`Conflicting parameter names at ${route.path}`);
      node.rest ??= { name: greedy, routes: new Map() };
      routes = node.rest.routes;
    }
    if (routes.has(route.method)) throw new Error(`Duplicate route ${route.method} ${route.path}`);
    routes.set(route.method, route);
  }

  match(method: string, path: string): RouteMatch<R> {
    const found = this.find(this.root, segmentsOf(path), 0, {});
    if (!found) return { kind: 'none' };
    const upper = method.toUpperCase();
    // HEAD is GET without the body (RFC 9110): a GET route answers it unless a HEAD route exists.
    const route = found.routes.get(upper) ?? (upper === 'HEAD' ? found.routes.get('GET') : undefined);
    if (route) return { kind: 'found', route, params: found.params };
    return { kind: 'wrong-method', allowed: [...found.routes.keys()].sort() };
  }

  private find(
    node: Node<R>,
    segments: string[],
    index: number,
    params: Record<string, string>,
  ): { routes: Map<string, R>; params: Record<string, string> } | undefined {
    if (index === segments.length) return node.routes.size > 0 ? { routes: node.routes, params } : undefined;
    const segment = segments[index]!;
    const literal = node.literal.get(segment);
    const viaLiteral = literal && this.find(literal, segments, index + 1, params);
    if (viaLiteral) return viaLiteral;
    const viaParam = node.param && this.findParam(node.param, segments, index, params);
    if (viaParam) return viaParam;
    return node.rest ? { routes: node.rest.routes, params: { ...params, [node.rest.name]: segments.slice(index).join('/') } } : undefined;
  }

  private findParam(
    param: { name: string; node: Node<R> },
    segments: string[],
    index: number,
    params: Record<string, string>,
  ): { routes: Map<string, R>; params: Record<string, string> } | undefined {
    let value: string;
    try {
      value = decodeURIComponent(segments[index]!);
    } catch {
      return undefined;
    }
    return this.find(param.node, segments, index + 1, { ...params, [param.name]: value });
  }
}

function segmentsOf(path: string): string[] {
  return path.split('/').filter((s) => s.length > 0);
}

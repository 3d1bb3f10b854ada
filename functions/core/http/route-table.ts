import type { RouteSpec } from '../../../lib/manifest/types.ts';

export type RouteMatch<R extends Pick<RouteSpec, 'method' | 'path'>> =
  | { readonly kind: 'found'; readonly route: R; readonly params: Record<string, string> }
  | { readonly kind: 'wrong-method'; readonly allowed: string[] }
  | { readonly kind: 'none' };

interface Node<R> {
  literal: Map<string, Node<R>>;
  param: { name: string; node: Node<R> } | undefined;
  routes: Map<string, R>;
}

const newNode = <R>(): Node<R> => ({ literal: new Map(), param: undefined, routes: new Map() });

/**
 * Matches paths against route templates, literal segments before `{param}` ones, so
 * `/user/token/list` wins over `/user/token/{tokenId}`. Used by the local server and by the cloud
 * fallback function that answers unknown routes and wrong methods.
 */
export class RouteTable<R extends Pick<RouteSpec, 'method' | 'path'>> {
  private readonly root: Node<R> = newNode();

  constructor(routes: readonly R[]) {
    for (const route of routes) this.add(route);
  }

  private add(route: R): void {
    let node = this.root;
    for (const segment of segmentsOf(route.path)) {
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
    if (node.routes.has(route.method)) throw new Error(`Duplicate route ${route.method} ${route.path}`);
    node.routes.set(route.method, route);
  }

  match(method: string, path: string): RouteMatch<R> {
    const found = this.find(this.root, segmentsOf(path), 0, {});
    if (!found) return { kind: 'none' };
    const route = found.node.routes.get(method.toUpperCase());
    if (route) return { kind: 'found', route, params: found.params };
    return { kind: 'wrong-method', allowed: [...found.node.routes.keys()].sort() };
  }

  private find(
    node: Node<R>,
    segments: string[],
    index: number,
    params: Record<string, string>,
  ): { node: Node<R>; params: Record<string, string> } | undefined {
    if (index === segments.length) return node.routes.size > 0 ? { node, params } : undefined;
    const segment = segments[index]!;
    const literal = node.literal.get(segment);
    const viaLiteral = literal && this.find(literal, segments, index + 1, params);
    if (viaLiteral) return viaLiteral;
    if (!node.param) return undefined;
    let value: string;
    try {
      value = decodeURIComponent(segment);
    } catch {
      return undefined;
    }
    return this.find(node.param.node, segments, index + 1, { ...params, [node.param.name]: value });
  }
}

function segmentsOf(path: string): string[] {
  return path.split('/').filter((s) => s.length > 0);
}

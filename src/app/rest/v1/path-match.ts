/** A GET route's path as a matcher: `:name` segments are parameters (decoded), everything else literal. */
export function pathMatcher(path: string): (candidate: string) => Record<string, string> | undefined {
  const names: string[] = [];
  const pattern = path
    .split('/')
    .map((segment) => {
      if (!segment.startsWith(':')) return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      names.push(segment.slice(1));
      return '([^/]+)';
    })
    .join('/');
  const regex = new RegExp(`^${pattern}$`);
  return (candidate) => {
    const found = regex.exec(candidate);
    if (!found) return undefined;
    const params: Record<string, string> = {};
    try {
      names.forEach((name, i) => (params[name] = decodeURIComponent(found[i + 1])));
    } catch {
      return undefined;
    }
    return params;
  };
}

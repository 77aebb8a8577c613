/**
 * The page's one DOM helper: an element with attributes and text. Text goes in as `textContent`, never as
 * markup, so that a bean's name can never run in the page (test/e2e/report-page "escapes every name").
 */
export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, string> = {},
  text?: string,
): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}

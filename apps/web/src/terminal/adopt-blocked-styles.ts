/**
 * xterm.js 6 writes its theme, font and cell rules into `<style>` elements it adds to the
 * terminal, which the dashboard's CSP (`style-src 'self'`, no 'unsafe-inline') refuses to apply:
 * the text would render in the wrong font, without colours or a cursor. Constructed style sheets
 * are not inline styles and CSP does not govern them, so the text of those elements is mirrored
 * into one adopted sheet, kept in step as xterm rewrites it (theme, resize). The CSP stays strict;
 * the browser still logs the refusal of each element, which is expected.
 * Returns the function that removes the sheet.
 */
export function adoptBlockedStyles(host: HTMLElement): () => void {
  const sheet = new CSSStyleSheet();
  document.adoptedStyleSheets = [...document.adoptedStyleSheets, sheet];
  let last = '';
  const mirror = () => {
    const text = Array.from(host.querySelectorAll('style'), (element) => element.textContent).join('\n');
    if (text === last) return;
    last = text;
    sheet.replaceSync(text);
  };
  const observer = new MutationObserver(mirror);
  observer.observe(host, { subtree: true, childList: true, characterData: true });
  mirror();
  return () => {
    observer.disconnect();
    document.adoptedStyleSheets = document.adoptedStyleSheets.filter((adopted) => adopted !== sheet);
  };
}

import type { Template } from './catalog.js';

/**
 * The images the operator's catalog runs are platform images (docs/security/image-policy.md): a
 * literal `image:` line, or one that is exactly `${VAR}` with the variable's default. A tenant's
 * own value for such a variable is tenant input and passes the image policy like any compose image.
 */
const IMAGE_LINE = /^\s*image:\s*["']?([^"'\s#]+)["']?\s*(?:#.*)?$/gm;
const WHOLE_VARIABLE = /^\$\{([A-Z_][A-Z0-9_]*)(?::?-([^}]*))?\}$/;

export function catalogImages(catalog: ReadonlyMap<string, Template>): string[] {
  const images = new Set<string>();
  for (const template of catalog.values()) {
    for (const match of template.compose.matchAll(IMAGE_LINE)) {
      const value = match[1] ?? '';
      const variable = WHOLE_VARIABLE.exec(value);
      if (variable) {
        const fallback = template.variables.find((v) => v.name === variable[1])?.default ?? variable[2];
        if (fallback && !fallback.includes('$')) images.add(fallback);
      } else if (!value.includes('$')) {
        images.add(value);
      }
    }
  }
  return [...images].sort();
}

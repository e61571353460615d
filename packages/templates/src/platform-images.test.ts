import { describe, expect, it } from 'vitest';
import { loadCatalog } from './catalog.js';
import { catalogImages } from './platform-images.js';

describe('catalogImages', () => {
  it('lists the literal images and the defaults of whole-variable images, never the variables', () => {
    const images = catalogImages(loadCatalog());
    expect(images).toEqual(
      expect.arrayContaining(['nginx:1.27', 'postgres:16', 'mariadb:11', 'local/busybox:1']),
    );
    expect(images.some((image) => image.includes('$'))).toBe(false);
  });

  it('reads quoted images and ignores variables without a default', () => {
    const catalog = new Map([
      [
        't',
        {
          id: 't',
          name: 't',
          description: '',
          category: 'x',
          variables: [{ name: 'IMG', description: '', required: true, secret: false }],
          compose:
            'services:\n  a:\n    image: "redis:7" # cache\n  b:\n    image: ${IMG}\n  c:\n    image: ${OTHER:-x/y:1}\n',
        },
      ],
    ]);
    expect(catalogImages(catalog)).toEqual(['redis:7', 'x/y:1']);
  });
});

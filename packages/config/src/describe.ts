// Mutates rather than spreads: TypeBox keeps its kind in a non-enumerable property a spread would drop.
export const describe = <T extends object>(schema: T, description: string): T =>
  Object.assign(schema, { description });

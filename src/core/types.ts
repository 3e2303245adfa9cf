// The store's type index: the public shapes of every area, each declared in its area's folder, re-exported
// here so that one import (`core/types.js`) names them all. Add an area's types file here when it is made.

export type * from './documents/types.js';
export type * from './events/types.js';
export type * from './instances.js';
export type * from './integrity/types.js';
export * from './primitives.js';
export * from './work/types.js';

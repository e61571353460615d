import { createFakeRuntime } from './fake-runtime.js';
import { runtimeContract } from './runtime-contract.js';
import { TEST_IMAGE } from './test-env.js';

runtimeContract('fake', () => ({ runtime: createFakeRuntime({ images: [TEST_IMAGE] }), image: TEST_IMAGE }));

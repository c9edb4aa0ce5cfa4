/* eslint-disable @typescript-eslint/no-require-imports -- a require hook is plain CommonJS, loaded by node -r */
/**
 * Lets a child process run src/main.ts without a build: each .ts file is transpiled on require with the
 * project's compiler options (type checking is `npm run typecheck`'s job). Used by the shutdown test.
 */
const fs = require('node:fs');
const path = require('node:path');
const ts = require('typescript');

const configFile = path.resolve(__dirname, '../../tsconfig.json');
const { config } = ts.readConfigFile(configFile, ts.sys.readFile);
const { options } = ts.convertCompilerOptionsFromJson(config.compilerOptions, path.dirname(configFile));
const compilerOptions = { ...options, module: ts.ModuleKind.CommonJS, sourceMap: false, inlineSourceMap: true };

require.extensions['.ts'] = (module, filename) => {
  const { outputText } = ts.transpileModule(fs.readFileSync(filename, 'utf8'), { compilerOptions, fileName: filename });
  module._compile(outputText, filename);
};

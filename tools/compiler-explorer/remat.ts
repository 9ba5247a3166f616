// remat-opt in Compiler Explorer: the stock MLIR compiler class (CE runs
// `remat-opt -o <dir>/example.out.mlir <options> <dir>/example.mlir` and
// shows the -o file) plus the pass-pipeline view, which CE enables only for
// classes that opt in. remat-opt prints MLIR's standard
// `// -----// IR Dump After ... //----- //` banners on stderr with
// --mlir-print-ir-after-all, which CE's MLIR pass-dump parser reads.
//
// Install: copy to <compiler-explorer>/lib/compilers/remat.ts and add
//   export {RematCompiler} from './remat.js';
// to lib/compilers/_all.ts (README.md in this directory).

import type {PreliminaryCompilerInfo} from '../../types/compiler.interfaces.js';
import type {
    OptPipelineBackendOptions,
    OptPipelineOutput,
} from '../../types/compilation/opt-pipeline-output.interfaces.js';
import type {ParseFiltersAndOutputOptions} from '../../types/features/filters.interfaces.js';
import type {CompilationEnvironment} from '../compilation-env.js';
import {MlirPassDumpParser} from '../parsers/mlir-pass-dump-parser.js';

import {MLIRCompiler} from './mlir.js';

export class RematCompiler extends MLIRCompiler {
    static override get key() {
        return 'remat';
    }

    private passDumpParser: MlirPassDumpParser;

    constructor(compilerInfo: PreliminaryCompilerInfo, env: CompilationEnvironment) {
        super(compilerInfo, env);
        // Offer the Opt Pipeline view for this compiler.
        this.compiler.optPipeline = {};
        this.passDumpParser = new MlirPassDumpParser(this.compilerProps);
    }

    override async generateOptPipeline(
        inputFilename: string,
        options: string[],
        filters: ParseFiltersAndOutputOptions,
        optPipelineOptions: OptPipelineBackendOptions,
    ): Promise<OptPipelineOutput | undefined> {
        // The same command as the compilation, with every pass's IR on stderr
        // (single-threaded so the dumps come in pipeline order).
        const dumpOptions = [...options, '--mlir-print-ir-after-all', '--mlir-disable-threading'];
        const compileStart = performance.now();
        const output = await this.runCompiler(
            this.compiler.exe,
            dumpOptions,
            inputFilename,
            this.getDefaultExecOptions(),
        );
        const compileEnd = performance.now();
        if (output.code !== 0 && output.code !== 2) {
            return {
                error: output.stderr.map(line => line.text).join('\n'),
                results: {},
                compileTime: compileEnd - compileStart,
            };
        }
        const parseStart = performance.now();
        const results = await this.passDumpParser.process(output.stderr, filters, optPipelineOptions);
        const parseEnd = performance.now();
        return {
            results,
            compileTime: compileEnd - compileStart,
            parseTime: parseEnd - parseStart,
        };
    }
}

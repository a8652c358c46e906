"""`jaxfix bench`: what a rewrite buys, measured. The original and the rewritten function are timed side by side
on the devices at hand (compile time on fresh function objects, steady run time, compilations, memory), with
the inputs and the worker process that `jaxfix verify` uses.

    options.py   what the command asks of the worker (plain data, sent as JSON)
    sizes.py     benchmark sizes for corpus cases: case.toml's `size_arg` and `batch_args`
    measure.py   the measurements, in the worker process (the only part that runs user code)
    worker.py    `python -m jaxfix.bench.worker`, served like verify's worker
    run.py       starts it through verify's runner
    report.py    ratios, the text table, JSON (the progress bar: jaxfix/report/progress.py)
"""

"""Running a sweep: datasets × kernels × samplers × tasks × ranks × λ × repetitions.

``config`` (the validated inputs), ``plan`` (cells, jobs, seeds), ``layout`` (every path
a sweep writes), ``context`` (what the jobs of a dataset, kernel and repetition share,
prepared once), ``worker`` (one job: fit once, check, evaluate every task, write each
cell), ``scheduler`` (jobs on forked workers, timeouts, signals), ``processes`` (what a
forked worker runs, and how it died), ``store`` (result files, schema migrations), ``parts``
(fits built in parts, as workflow jobs: DISQUEAK's merge tree), ``signals``.
"""

# prepare: one job per dataset, splitting it once per repetition; exact: one job per
# (dataset, kernel), computing the exact baseline of each repetition once for every run job
# to load (both only for a dataset several jobs read, or whose baseline may be matrix-free:
# kbench.workflow.Sweep.prepared_apart; another's run job makes them); part: one job per part
# of a sampler whose fits are built in parts (kbench.Sampler.parts: a distributed squeak's
# merge-tree nodes), each after the parts it is made from, the run job's fits starting from
# the last; run: one
# job per (dataset, kernel) covering every sampler, repetition, task, rank and λ (one process
# start, one load of the splits and baselines and one plan for all of them), so each sampler
# fit serves all tasks, and one job per sampler on a dataset stated larger than 10⁵ rows; one
# run rule per (dataset, kernel), its cells static outputs (a task that refuses a dataset's
# type, and a sampler that refuses the kernel, are never planned: kbench.sweep.plan.not_planned).
# Failed cells are recorded in their files (status error/timeout/oom) and do not fail the
# workflow: `kbench run` exits 1 for them, 2 for a real usage error.

wildcard_constraints:
    rep=r"\d+",
    kernel=r"[^/]+",
    dataset=r"[^/]+",
    sampler=r"[^/]+",
    part=r"[A-Za-z0-9._-]+",


rule prepare:
    input:
        dataset_files,
    output:
        expand(SWEEP.split_pattern(), rep=SWEEP.repetitions, allow_missing=True),
    log:
        SWEEP.log("prepare"),
    params:
        spec=lambda wc: spec_of("datasets", wc.dataset),
        repetitions=config["repetitions"],
        seed=config["seed"],
        cache=SWEEP.data,
    resources:
        mem_mb=lambda wc, attempt: SWEEP.memory_mb(spec_of("datasets", wc.dataset), attempt),
        runtime=lambda wc, attempt: SWEEP.runtime_min(spec_of("datasets", wc.dataset), attempt),
        cpus_per_task=1,
    conda:
        "../envs/kbench.yaml"
    shell:
        "kbench prepare --datasets {params.spec:q} --repetitions {params.repetitions:q} "
        "--seed {params.seed:q} --data-cache {params.cache:q} > {log:q} 2>&1"


rule exact:
    input:
        lambda wc: SWEEP.split_files(spec_of("datasets", wc.dataset)),
    output:
        expand(SWEEP.exact_pattern(), rep=SWEEP.repetitions, allow_missing=True),
    log:
        SWEEP.log("exact"),
    params:
        dataset=lambda wc: spec_of("datasets", wc.dataset),
        kernel=lambda wc: SWEEP.kernels_by_slug()[wc.kernel],
        max_n=EXACT_MAX_N,
        repetitions=config["repetitions"],
        tasks=",".join(config["tasks"]),
        **SWEEP.lam_params(),
        seed=config["seed"],
        cache=SWEEP.data,
    resources:
        mem_mb=lambda wc, attempt: SWEEP.memory_mb(spec_of("datasets", wc.dataset), attempt),
        runtime=lambda wc, attempt: SWEEP.runtime_min(spec_of("datasets", wc.dataset), attempt, exact=True,
                                                      repetitions=len(SWEEP.repetitions)),
        cpus_per_task=1,
    conda:
        "../envs/kbench.yaml"
    shell:
        "kbench prepare --datasets {params.dataset:q} --repetitions {params.repetitions:q} "
        "--seed {params.seed:q} --data-cache {params.cache:q} --exact {params.kernel:q} "
        "--exact-max-n {params.max_n:q} --tasks {params.tasks:q} --lams {params.lams:q} "
        "{params.lam_bounds:q} --selection {params.selection:q} > {log:q} 2>&1"


rule part:
    input:
        lambda wc: SWEEP.split_file(spec_of("datasets", wc.dataset), int(wc.rep)),
        lambda wc: SWEEP.part_files(spec_of("datasets", wc.dataset), SWEEP.kernels_by_slug()[wc.kernel],
                                    spec_of("samplers", wc.sampler), int(wc.rep), part=wc.part),
    output:
        SWEEP.part_pattern(),
    log:
        SWEEP.log("part"),
    params:
        dataset=lambda wc: spec_of("datasets", wc.dataset),
        kernel=lambda wc: SWEEP.kernels_by_slug()[wc.kernel],
        sampler=lambda wc: spec_of("samplers", wc.sampler),
        ranks=",".join(map(str, config["ranks"])),
        lams=SWEEP.lam_params()["lams"],
        seed=config["seed"],
        cache=SWEEP.data,
    resources:
        mem_mb=lambda wc, attempt: SWEEP.memory_mb(spec_of("datasets", wc.dataset), attempt),
        runtime=lambda wc, attempt: SWEEP.runtime_min(spec_of("datasets", wc.dataset), attempt),
        cpus_per_task=1,
    conda:
        "../envs/kbench.yaml"
    shell:
        "kbench part --dataset {params.dataset:q} --kernel {params.kernel:q} --sampler {params.sampler:q} "
        "--ranks {params.ranks:q} --lams {params.lams:q} --only-repetition {wildcards.rep:q} "
        "--seed {params.seed:q} --part {wildcards.part:q} --data-cache {params.cache:q} > {log:q} 2>&1"


for RUN in SWEEP.run_rules():

    rule:
        name:
            RUN.name
        input:
            SWEEP.run_inputs(RUN),
        output:
            # update: a rerun keeps the cells already there (kbench run resumes), and with
            # keep-incomplete (both profiles) a failed job keeps the cells it wrote
            update(SWEEP.run_outputs(RUN)),
        log:
            SWEEP.run_log(RUN),
        params:
            dataset=RUN.dataset,
            samplers=SWEEP.run_samplers(RUN),
            tasks=",".join(SWEEP.tasks_of(RUN.dataset)),
            ranks=",".join(map(str, config["ranks"])),
            **SWEEP.lam_params(),
            kernel=RUN.kernel,
            repetitions=config["repetitions"],
            timeout=config.get("cell_timeout", 600),
            # a changed value reruns the job; true computes its failed cells again
            retry=["--retry-failed"] if config.get("retry_failed") else [],
            # kbench records a cell past the job's runtime or memory as timeout/oom before the
            # scheduler kills the job (kbench.workflow.Sweep.time_limit, memory_limit)
            time_limit=lambda wc, resources: SWEEP.time_limit(resources.runtime),
            memory_limit=lambda wc, resources, threads: SWEEP.memory_limit(resources.mem_mb, threads),
            seed=config["seed"],
            cache=SWEEP.data,
            out=OUT,
            # the packages and versions behind the job's cells: a new version reruns the job
            # (the profiles rerun on params, not on file times), and kbench run recomputes only
            # the cells whose identity changed
            packages=SWEEP.job_identity(RUN),
        threads: SWEEP.resources("cpus_per_task")
        resources:
            **SWEEP.run_resources(RUN),
            cpus_per_task=lambda wc, threads: threads,
        conda:
            "../envs/kbench.yaml"
        shell:
            "kbench run --datasets {params.dataset:q} --samplers {params.samplers:q} --tasks {params.tasks:q} "
            "--ranks {params.ranks:q} --lams {params.lams:q} {params.lam_bounds:q} "
            "--selection {params.selection:q} --kernel {params.kernel:q} "
            "--repetitions {params.repetitions:q} --seed {params.seed:q} "
            "--jobs {threads} --cell-timeout {params.timeout:q} --time-limit {params.time_limit:q} "
            "--memory-limit {params.memory_limit:q} {params.retry:q} --data-cache {params.cache:q} "
            "--out {params.out:q} --quiet > {log:q} 2>&1 || test $? -eq 1"

# aggregate: the config's cells (listed by cell_list) → all.parquet (a catalogue's sweep: each batch's
# cells → batches/<batch>.parquet, and those → all.parquet); leaderboard: tables, figures and the HTML page.
# Local rules: light, and the leaderboard header reads the main process's command line and
# executor from its environment (KBENCH_COMMAND, KBENCH_EXECUTOR: common.smk), not from
# params, so a rerun with other flags (-n, say) does not rerun the leaderboard.

localrules:
    aggregate,
    paper,
    leaderboard,


if SWEEP.batches.specs:  # a catalogue's sweep: each batch aggregated on its own, all.parquet from the batch files

    localrules:
        batch,

    rule batch:
        input:
            lambda wc: SWEEP.batch_cells(SWEEP.batches.names[wc.batch]),
        output:
            SWEEP.out / layout.BATCH,
        wildcard_constraints:
            # a batch whose file exists is an input, not an output: it is kept, never recomputed
            batch="|".join(re.escape(SWEEP.batches.file(b).stem) for b in SWEEP.batches.missing) or "(?!)",
        log:
            SWEEP.log("batch"),
        params:
            folders=lambda wc: SWEEP.batch_folders(SWEEP.batches.names[wc.batch]),
        resources:
            mem_mb=lambda wc, attempt: SWEEP.resources("mem_mb") * attempt,
            runtime=lambda wc, attempt: SWEEP.resources("runtime") * attempt,
            cpus_per_task=1,
        conda:
            "../envs/kbench.yaml"
        shell:
            "kbench aggregate --out {output:q} -- {params.folders:q} > {log:q} 2>&1"


else:  # the config's cells, listed in a file: a config no longer naming a sampler, rank or task drops its cells

    localrules:
        cell_list,

    rule cell_list:
        input:
            SWEEP.job_targets,
        output:
            layout.cell_list_path(OUT, SWEEP.sweep),
        log:
            SWEEP.log("cell_list"),
        run:
            write_text(output[0], "".join(f"{path}\n" for path in SWEEP.all_cells))


rule aggregate:
    input:
        [SWEEP.batches.file(b) for b in SWEEP.batches.specs] if SWEEP.batches.specs else layout.cell_list_path(OUT, SWEEP.sweep),
    output:
        OUT / "all.parquet",
    log:
        SWEEP.log("aggregate"),
    params:
        # a catalogue's batch files, else the list of the config's cells
        paths=lambda wc, input: ["--", *input] if SWEEP.batches.specs else ["--files-from", *input],
        sweep=SWEEP.sweep,
    resources:
        mem_mb=lambda wc, attempt: SWEEP.resources("mem_mb") * attempt,
        runtime=lambda wc, attempt: SWEEP.resources("runtime") * attempt,
        cpus_per_task=1,
    conda:
        "../envs/kbench.yaml"
    shell:
        "kbench aggregate --sweep {params.sweep:q} --out {output:q} {params.paths:q} > {log:q} 2>&1"


rule paper:
    input:
        OUT / "all.parquet",
    output:
        PAPER_OUT / "{paper}.md",
        PAPER_OUT / "{paper}.claims.json",
    log:
        SWEEP.log("paper"),
    params:
        out=PAPER_OUT,
    resources:
        mem_mb=lambda wc, attempt: SWEEP.resources("mem_mb") * attempt,
        runtime=lambda wc, attempt: SWEEP.resources("runtime") * attempt,
        cpus_per_task=1,
    conda:
        "../envs/kbench.yaml"
    shell:
        "kbench papers --paper {wildcards.paper:q} --out {params.out:q} -- {input:q} > {log:q} 2>&1"


rule leaderboard:
    input:
        OUT / "all.parquet",
    output:
        md=OUT / "leaderboard.md",
        html=OUT / "leaderboard.html",
    log:
        SWEEP.log("leaderboard"),
    params:
        out=OUT,
    resources:
        mem_mb=lambda wc, attempt: SWEEP.resources("mem_mb") * attempt,
        runtime=lambda wc, attempt: SWEEP.resources("runtime") * attempt,
        cpus_per_task=1,
    conda:
        "../envs/kbench.yaml"
    shell:
        # (its figures/ is not an output Snakemake would empty first: the page removes only
        # the figures of an earlier page, files named as it names them, and keeps the user's)
        "kbench leaderboard --out {params.out:q} -- {input:q} > {log:q} 2>&1"

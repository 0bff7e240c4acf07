/* SPDX-License-Identifier: MIT */
/* Internal to entroscope-cli: the parsed command line, between its option parser and its commands. */
#pragma once

#include <stdbool.h>
#include <stdio.h>

#include "es-bench.h"
#include "es-cli-report.h"
#include "es-pipeline.h"
#include "es-volume.h"

/* ES_VERSION comes from project() in meson.build. */

/* The kinds of command; each option names the kinds that accept it. */
typedef enum {
  ES_CLI_COMMAND_OP = 1 << 0, /* entropy, equalize, ...: one per operation */
  ES_CLI_COMMAND_INFO = 1 << 1,
  ES_CLI_COMMAND_BENCH = 1 << 2,
} EsCliCommand;

/* The files that options make a command read, besides its operands (the
 * inputs). Each is checked against every output with the inputs
 * (es-cli-files.h): a new kind of input file is a role here, set by its
 * option, and is covered by that rule with no other change. */
typedef enum {
  ES_CLI_READS_FOOTPRINT, /* --footprint */
  ES_CLI_READS_MASK,      /* --mask */
  ES_CLI_N_READS,
} EsCliReads;

/* "footprint", "mask": how messages name a role. */
extern const char *const es_cli_reads_name[ES_CLI_N_READS];

typedef struct {
  const char *output;
  bool quiet;
  bool timings;
  bool metrics;  /* --metrics: EsTiming.metrics beside each time */
  bool counters; /* --metrics=hw: and the hardware counters (es_engine_set_counters) */
  bool sandbox;  /* --sandbox: inputs decoded by es_sandbox_decode_fd */
  bool colorbar;
  bool raw16;
  bool format_set;
  EsExportFormat format;
  EsCompression compression; /* of PNG outputs */
  const char *colormap;      /* NULL: the operation's default */
  EsRangeMode range;
  EsUnits units;
  EsJob job; /* --window, --levels, --amount; op and variant unset */
  EsBackendChoice backend;
  const char *variant;
  unsigned long long max_pixels; /* 0: the default budget */
  EsBenchOptions bench;          /* ops and sizes hold the defaults until given */
  bool sizes_given;              /* --sizes, which bench --image refuses */
  /* The entropy definition (es-cli-definition.c) lives in job.definition;
   * these are what it needs beyond the job. */
  bool window_given, shape_given;      /* an explicit shape wins over --like's */
  bool definition_given;               /* a definition option or --units (bench takes them with --image) */
  const char *shape_name, *shape_text; /* the option that gave it ("ball", "3"): es_cli_claim_shape */
  bool units_given;                    /* and explicit units over its own */
  unsigned params_given;               /* ES_PARAM_BIT() of the parameters given, which win over --like's */
  const char *like;                    /* --like: a preset of the job's operation */
  const char *reads[ES_CLI_N_READS];   /* the files of --footprint, --mask...; NULL: not given */
  bool volume;                         /* --volume */
  EsVolumeChoice volume_choice;        /* --channel, --time */
} EsCliOptions;

/* The definition's options, parsed by es_cli_parse_definition_option. */
typedef enum {
  ES_CLI_RECT,        /* --rect=HxW */
  ES_CLI_DISK,        /* --disk=R */
  ES_CLI_FOOTPRINT,   /* --footprint=FILE */
  ES_CLI_BORDER,      /* --border=clip|symmetric|mirror|replicate|constant[:V] */
  ES_CLI_BINNING,     /* --binning=depth|range:LO:HI|minmax|exact|byte */
  ES_CLI_MASK,        /* --mask=FILE */
  ES_CLI_LIKE,        /* --like=matlab|skimage|fiji */
  ES_CLI_BOX,         /* --box=DxHxW */
  ES_CLI_BALL,        /* --ball=R */
  ES_CLI_VOLUME,      /* --volume: a stack is a volume whatever the window */
  ES_CLI_CHANNEL,     /* --channel=C of an OME-TIFF */
  ES_CLI_TIME,        /* --time=T of an OME-TIFF */
  ES_CLI_KERNEL_SIZE, /* --kernel-size=K|HxW, clahe --like skimage's kernel_size */
  ES_CLI_NBINS,       /* --nbins=B, clahe --like skimage's nbins (MATLAB's NBins with --like matlab) */
} EsCliDefinitionOption;

/* The files a definition reads, owned by the command that runs it. */
typedef struct {
  EsImage footprint_cells, mask;
  EsFootprint footprint;
} EsCliDefinitionFiles;

/* Reports its own usage errors (returns false). */
bool es_cli_parse_definition_option (EsCliDefinitionOption option, const char *text, EsCliOptions *options);
/* Records that --NAME=TEXT gives the window's shape (--window, --rect,
 * --disk, --footprint, --box, --ball): false, with a usage error, where
 * another of them already gave it. The same option again replaces its
 * value, as any option does. */
bool es_cli_claim_shape (EsCliOptions *options, const char *name, const char *text);
/* After every option: applies --like, a preset of options->job.op. Reports
 * a name that is not one of its usage error (returns false). */
bool es_cli_definition_finish (EsCliOptions *options);
/* Loads --footprint and --mask into files and points the job at them. */
bool es_cli_definition_load (EsCliOptions *options, EsCliDefinitionFiles *files, EsError *error);
void es_cli_definition_clear (EsCliDefinitionFiles *files);
/* A mask read from mask_path (NULL: none from a file) of another size
 * than `input` (read from input_path) is a data error (ES_ERROR_FORMAT)
 * about the mask's file: the error says so, and the caller reports it
 * with the mask's file as its subject (the engine would say only that the
 * sizes differ). */
bool es_cli_check_mask (const char *mask_path, const EsJob *job, const char *input_path, const EsImage *input,
                        EsError *error);
/* Whether the job reads a multi-page input as one volume rather than a
 * stack of planes: a 3-D window, or --volume. */
bool es_cli_reads_volumes (const EsCliOptions *options, const EsJob *job);
/* The --help entries of the definition's options. */
void es_cli_print_definition_help (FILE *out);

/* The defaults of every option. */
void es_cli_options_init (EsCliOptions *options);
/* Parses argv (argv[0] is the command word) into options; getopt_long
 * leaves the operands at argv[optind...]. Returns -1 to go on, else the
 * exit status (after --help and --version too). */
int es_cli_parse_options (int argc, char **argv, EsCliCommand command, EsCliOptions *options);
void es_cli_print_help (FILE *out);
void es_cli_print_version (FILE *out);

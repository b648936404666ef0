"""#SBATCH lines read as sbatch reads them, on scripts written the way tutorials teach."""

from __future__ import annotations

from app.scheduler.directives import Directive, read_directives, split_words

TUTORIAL = """#!/bin/bash
#SBATCH --job-name=train-resnet
#SBATCH --account=def-someuser
#SBATCH -p gpu
#SBATCH --time 0-03:00      # three hours
#SBATCH --gres=gpu:a100:1 --cpus-per-task=6
#SBATCH --mem=32000M
#SBATCH --output=logs/%x-%j.out
# SBATCH --qos=high  (a comment: the space makes it one)

module load python/3.11
#SBATCH --partition=late
srun python train.py "$1"
"""


def test_tutorial_script_directives_in_long_short_equals_and_space_forms() -> None:
    read = read_directives(TUTORIAL)
    assert not read.errors
    assert read.get("job-name") == "train-resnet"
    assert read.get("account") == "def-someuser"
    assert read.get("partition") == "gpu"
    assert read.get("time") == "0-03:00"
    assert (read.get("gres"), read.get("cpus-per-task")) == ("gpu:a100:1", "6")
    assert read.get("output") == "logs/%x-%j.out"
    assert not read.has("qos")


def test_directives_after_the_first_command_are_ignored_and_said() -> None:
    read = read_directives(TUTORIAL)
    assert read.get("partition") == "gpu"
    [ignored] = read.ignored
    assert ignored.line == 12 and "--partition=late" in ignored.text
    assert "after the first command" in ignored.message


def test_a_misspelt_option_is_named_with_the_closest_valid_one() -> None:
    read = read_directives("#!/bin/bash\n#SBATCH --ntaks-per-node=4\n#SBATCH --mem 1G\necho\n")
    [error] = read.errors
    assert error.line == 2
    assert (
        error.message == "sbatch has no option --ntaks-per-node (did you mean --ntasks-per-node?)"
    )
    assert read.get("mem") == "1G"


def test_quoted_values_and_comments() -> None:
    read = read_directives('#!/bin/sh\n#SBATCH --job-name="my run #2" # trailing comment\n')
    assert read.get("job-name") == "my run #2"
    assert list(split_words("--output=out#1.txt #note")) == ["--output=out#1.txt"]


def test_short_options_glued_or_spaced_and_flags() -> None:
    read = read_directives("#!/bin/bash\n#SBATCH -N2 -n 4 -J x --hold --exclusive\nhostname\n")
    assert (read.get("nodes"), read.get("ntasks"), read.get("job-name")) == ("2", "4", "x")
    assert read.has("hold") and read.get("hold") is None
    assert read.has("exclusive")


def test_overrides_win_like_the_command_line_and_later_lines_win_in_the_script() -> None:
    script = "#!/bin/bash\n#SBATCH -t 10\n#SBATCH -t 20\n#SBATCH -p debug\n"
    read = read_directives(script, [Directive("partition", "long")])
    assert (read.get("time"), read.get("partition")) == ("20", "long")


def test_unclosed_quote_missing_value_and_stray_words_are_errors() -> None:
    script = '#!/bin/bash\n#SBATCH --job-name="oops\n#SBATCH --time\n#SBATCH nodes=2\n'
    messages = [e.message for e in read_directives(script).errors]
    assert messages == [
        'a " quote is never closed',
        "--time needs a value",
        "'nodes=2' is not an option (options start with - or --)",
    ]


def test_unambiguous_prefixes_are_accepted_as_sbatch_does() -> None:
    read = read_directives("#!/bin/bash\n#SBATCH --cpus-per-t=4\n#SBATCH --parti=debug\n")
    assert (read.get("cpus-per-task"), read.get("partition")) == ("4", "debug")
    [error] = read_directives("#!/bin/bash\n#SBATCH --par=debug\n").errors
    assert error.message == "--par is ambiguous: --parsable or --partition"


def test_a_flag_given_a_value_is_an_error() -> None:
    [error] = read_directives("#!/bin/bash\n#SBATCH --hold=yes\n").errors
    assert error.message == "--hold takes no value"

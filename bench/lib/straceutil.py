"""Shared by the bench/ scripts: system calls per call name of one command,
counted with `strace -f -c`, and their per-cycle steady state."""
import subprocess
import tempfile


def strace_counts(cmd):
    """Calls per system call name of `cmd` (all threads), from strace -f -c."""
    with tempfile.NamedTemporaryFile(mode="r", suffix=".strace") as out:
        subprocess.run(["strace", "-f", "-c", "-o", out.name, "--"] + cmd,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        counts = {}
        for line in open(out.name):
            parts = line.split()
            # % time, seconds, usecs/call, calls, [errors], syscall
            if len(parts) >= 5 and parts[0][0].isdigit() and parts[-1] != "total":
                counts[parts[-1]] = int(parts[3])
        return counts


def calls_per_cycle(cmd, loops):
    """Per-cycle calls by name in the steady state: the counts of 2L loops
    minus those of L loops, over L (start-up and shut-down cancel out)."""
    short = strace_counts(cmd + ["-l", str(loops)])
    long = strace_counts(cmd + ["-l", str(2 * loops)])
    return {n: (long.get(n, 0) - short.get(n, 0)) / loops for n in set(short) | set(long)}

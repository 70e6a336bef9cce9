"""Linux CPU lists ("0-3,8")."""


def parse_cpu_list(text):
    cpus = set()
    for tok in text.strip().split(","):
        if not tok:
            continue
        if "-" in tok:
            a, b = tok.split("-", 1)
            cpus.update(range(int(a), int(b) + 1))
        else:
            cpus.add(int(tok))
    return cpus


def format_cpu_list(cpus):
    out, run = [], []
    for c in sorted(cpus):
        if run and c == run[-1] + 1:
            run.append(c)
            continue
        if run:
            out.append(str(run[0]) if len(run) == 1 else f"{run[0]}-{run[-1]}")
        run = [c]
    if run:
        out.append(str(run[0]) if len(run) == 1 else f"{run[0]}-{run[-1]}")
    return ",".join(out)

# Rendered by wakebench report; run from this folder: gnuplot matrix-pipe-processes.gp
# Writes matrix-pipe-processes.png and matrix-pipe-processes.svg from matrix-pipe-processes.dat.
if (strstrt(GPVAL_TERMINALS, " pngcairo ") > 0) {
  set terminal pngcairo size 660,500 noenhanced font "sans,10"
} else {
  set terminal png size 660,500 noenhanced
}
set output 'matrix-pipe-processes.png'
set datafile missing 'NaN'
set palette defined (0 '#2c7bb6', 0.25 '#abd9e9', 0.5 '#ffffbf', 0.75 '#fdae61', 1 '#d7191c')
set title 'pipe/processes: median round-trip time per CPU pair'
set xlabel 'wakee CPU (OS index)'
set ylabel 'waker CPU (OS index)'
set cblabel 'median RTT (ns)'
set xrange [-0.5:1.5]
set yrange [1.5:-0.5]
set size ratio -1
set tics nomirror
unset key
set xtics 1
set ytics 1
plot 'matrix-pipe-processes.dat' using 1:2:(0.5):(0.5):3 with boxxyerror fillstyle solid 1.0 noborder lc palette, \
     '' using 1:2:(sprintf('%.0f', $3)) with labels
set terminal svg size 660,500 noenhanced font "sans,10"
set output 'matrix-pipe-processes.svg'
replot
unset output

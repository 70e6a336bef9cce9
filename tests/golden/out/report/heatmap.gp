# Rendered by wakebench report; run from this folder: gnuplot heatmap.gp
# Writes heatmap.png and heatmap.svg from heatmap.dat.
if (strstrt(GPVAL_TERMINALS, " pngcairo ") > 0) {
  set terminal pngcairo size 710,400 noenhanced font "sans,10"
} else {
  set terminal png size 710,400 noenhanced
}
set output 'heatmap.png'
set datafile missing 'NaN'
set palette defined (0 '#2c7bb6', 0.25 '#abd9e9', 0.5 '#ffffbf', 0.75 '#fdae61', 1 '#d7191c')
set title 'Median round-trip time by placement class (blank: not measured or not ok)'
set xlabel 'placement of the wakee relative to the waker (class; kernel = unpinned)'
set ylabel 'mechanism/mode'
set cblabel 'median RTT (ns)'
set xrange [-0.5:4.5]
set yrange [2.5:-0.5]
set xtics rotate by -30 ('same-cpu' 0, 'smt-sibling' 1, 'llc' 2, 'kernel' 3, 'kernel:0,1' 4)
set ytics ('pipe/processes' 0, 'pipe/threads' 1, 'futex/threads' 2)
set tics nomirror
unset key
plot 'heatmap.dat' using 1:2:(0.5):(0.5):3 with boxxyerror fillstyle solid 1.0 noborder lc palette, \
     '' using 1:2:(sprintf('%.0f', $3)) with labels
set terminal svg size 710,400 noenhanced font "sans,10"
set output 'heatmap.svg'
replot
unset output
